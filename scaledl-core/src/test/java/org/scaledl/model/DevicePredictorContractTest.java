package org.scaledl.model;

import java.util.ArrayList;
import java.util.List;
import org.scaledl.TestData;
import org.scaledl.io.GpuData;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/** The device predictor (boosted trees, all-reduce model, parallelism) keeps the contract. */
class DevicePredictorContractTest extends RuntimePredictorContract {
    private static final GpuData DATA = GpuData.read(TestData.gpu(), catalog());

    @Override
    protected org.scaledl.model.PredictorTrainer trainer() {
        return RuntimePredictor.builder().name("scaledl-device").layerCost(LayerCost.device(DATA.operators()))
                .collectives(DATA.collectives()).seed(5).build();
    }

    @Override
    protected List<Sample> samples() {
        return DATA.samples(r -> r.parallelism().ranks() == 1 && !r.fusion());
    }

    @Override
    protected List<Workload> workloads() {
        List<Workload> out = new ArrayList<>();
        for (GpuData.Run r : DATA.runs()) {
            DATA.workload(r).ifPresent(out::add);
        }
        Workload w = out.get(0);
        out.add(w.toBuilder().device(catalog().require("NVIDIA A100-PCIE-40GB")).build());
        out.add(w.toBuilder().batch(4 * w.batch()).parallelism(Parallelism.of(2, 2, 2, 4)).phase(Phase.TRAIN).build());
        return out;
    }

    @Override
    protected Workload wrongDevice() {
        return Workload.builder(OnnxImporter.read(TestData.graph("resnet18_r64"))).batch(2).build();
    }

    @Override
    protected Workload unsupportedParallelism() {
        return Workload.builder(OnnxImporter.read(TestData.graph("resnet18_r64"))).batch(2)
                .device(catalog().require("NVIDIA H100 80GB HBM3")).parallelism(Parallelism.of(1, 2, 1, 1)).build();
    }
}
