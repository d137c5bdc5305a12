package org.scaledl.gnn;

import java.util.ArrayList;
import java.util.List;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.host.LayerBasis;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.RuntimePredictorContract;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/** The host predictor with the GNN interaction stage keeps the contract. */
class GnnPredictorContractTest extends RuntimePredictorContract {
    private static final List<Sample> SAMPLES = new ArrayList<>();
    private static final List<Workload> WORKLOADS = new ArrayList<>();

    static {
        int family = 0;
        for (String name : new String[] {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64", "alexnet_r224"}) {
            ModelGraph g = OnnxImporter.read(GnnTrainerTest.graph(name));
            for (int batch : new int[] {1, 4, 16}) {
                for (Phase phase : Phase.values()) {
                    Workload w = Workload.builder(g).batch(batch).phase(phase).tag("family", "f" + family).build();
                    double flops = LayerBasis.standard().row(w)[LayerBasis.column(OpFamily.CONV, 2)];
                    SAMPLES.add(Sample.of(w, (1 + 0.4 * family) * (4 + flops * 1e-8)));
                }
            }
            WORKLOADS.add(Workload.builder(g).batch(8).phase(Phase.TRAIN).worldSize(2).build());
            WORKLOADS.add(Workload.builder(g).batch(2).phase(Phase.INFER).threads(2).build());
            family++;
        }
    }

    @Override
    protected org.scaledl.model.PredictorTrainer trainer() {
        return RuntimePredictor.builder().interactions(new GnnInteractions().withSize(8, 2, 20)).seed(2).build();
    }

    @Override
    protected List<Sample> samples() {
        return SAMPLES;
    }

    @Override
    protected List<Workload> workloads() {
        return WORKLOADS;
    }

    @Override
    protected Workload wrongDevice() {
        return WORKLOADS.get(0).toBuilder().device(catalog().require("Tesla T4")).build();
    }
}
