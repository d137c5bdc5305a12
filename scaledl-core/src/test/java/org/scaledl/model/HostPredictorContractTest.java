package org.scaledl.model;

import org.scaledl.model.host.LayerBasis;
import java.util.ArrayList;
import java.util.List;
import org.scaledl.TestData;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/** The host layer-wise predictor keeps the contract. */
class HostPredictorContractTest extends RuntimePredictorContract {
    private static final List<Sample> SAMPLES = new ArrayList<>();
    private static final List<Workload> WORKLOADS = new ArrayList<>();

    static {
        int family = 0;
        for (String name : new String[] {"resnet18_r64", "squeezenet1_1_r64", "mobilenet_v2_r64", "tinybert_r64"}) {
            ModelGraph g = OnnxImporter.read(TestData.graph(name));
            for (int batch : new int[] {2, 8}) {
                for (Phase phase : Phase.values()) {
                    for (int threads = 1; threads <= 2; threads++) {
                        Workload w = Workload.builder(g).batch(batch).phase(phase).threads(threads)
                                .tag("family", "f" + family).build();
                        double flops = LayerBasis.standard().row(w)[LayerBasis.column(
                                org.scaledl.workload.OpFamily.CONV, 2)];
                        SAMPLES.add(Sample.of(w, (3 + 1e-8 * flops) * (phase == Phase.TRAIN ? 3 : 1) / threads
                                * (1 + 0.1 * family)));
                    }
                }
                Workload dp = Workload.builder(g).batch(batch).phase(Phase.TRAIN).worldSize(2)
                        .tag("family", "f" + family).build();
                SAMPLES.add(Sample.of(dp, 10 + batch));
                WORKLOADS.add(dp);
                WORKLOADS.add(Workload.builder(g).batch(batch * 3).phase(Phase.INFER).threads(2).build());
            }
            family++;
        }
    }

    @Override
    protected org.scaledl.model.PredictorTrainer trainer() {
        return RuntimePredictor.builder().seed(3).build();
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
