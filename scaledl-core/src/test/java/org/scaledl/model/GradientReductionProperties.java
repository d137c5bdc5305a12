package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.TestData;
import org.scaledl.io.CollectiveTables;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.io.GpuData;
import org.scaledl.model.comm.AllReduceModel;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.exec.ExecutionTerm;
import org.scaledl.model.exec.MegatronExecution;
import org.scaledl.model.exec.MegatronTerms;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Reducing the gradients after the backward pass never hides more than overlapping them does: for any layout, ZeRO
 * stage, micro-batching and network, the exposed data-parallel time with {@link Workload#gradReduceAfterBackward()}
 * is at least the overlapped one, and no other term of the step changes (the device model and collectives fitted
 * on the test excerpts of the kernel data, as in {@link MegatronExecutionTest}).
 */
class GradientReductionProperties {
    private static final Device A100 = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
    /** GPT 1.3B, and a model so small that its whole reduction is one bucket. */
    private static final List<TransformerSpec> MODELS = List.of(TransformerSpec.decoder("gpt-1.3b", 2048, 16, 24,
            50257).maxPositions(2048).build(), TransformerSpec.decoder("gpt-tiny", 128, 8, 4, 1024).maxPositions(2048)
            .build());
    private static DeviceLayerModel layers;
    private static CommunicationModel comm;

    private static synchronized void fit() {
        if (layers == null) {
            GpuData data = GpuData.read(TestData.gpu(), DeviceCatalog.bundled());
            List<CollectiveMeasurement> measured = new ArrayList<>(data.collectives());
            measured.addAll(CollectiveTables.readNcclTests(TestData.gpuDataset().resolve("vtrain/nccl/a100"),
                    A100.name(), Topology.of(8, Topology.Link.NVSWITCH, 300, 1600), 64));
            comm = AllReduceModel.fit(measured);
            layers = DeviceLayerModel.fit(data.operators());
        }
    }

    private static Optional<String> refusal(Workload w) {
        try {
            MegatronExecution.check(w);
            return Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage());
        }
    }

    @Property(tries = 120)
    void afterTheBackwardPassIsNeverLessExposed(@ForAll @IntRange(min = 1, max = 6) int logDp,
            @ForAll @IntRange(min = 0, max = 3) int logTp, @ForAll @IntRange(min = 0, max = 2) int logPp,
            @ForAll @IntRange(min = 1, max = 16) int microBatches, @ForAll @IntRange(min = 0, max = 2) int logMicro,
            @ForAll @IntRange(min = 0, max = 3) int zero, @ForAll @IntRange(min = 0, max = 7) int logNetwork,
            @ForAll boolean tiny) {
        fit();
        TransformerSpec model = MODELS.get(tiny ? 1 : 0);
        int dp = 1 << logDp;
        int tp = 1 << logTp;
        int pp = 1 << logPp;
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 25.0 * (1 << logNetwork));
        Workload overlapped = Workload.builder(model.graph(2048)).batch((1 << logMicro) * microBatches)
                .phase(Phase.TRAIN).device(A100).topology(topo).precision(Precision.BF16).recompute(Recompute.FULL)
                .parallelism(Parallelism.of(dp, tp, pp, microBatches).withZeroStage(zero)).build();
        Workload after = overlapped.toBuilder().gradReduceAfterBackward(true).build();
        // only layouts the predictor runs (every one here: checked all the same)
        net.jqwik.api.Assume.that(refusal(after).isEmpty());
        MegatronTerms o = MegatronExecution.terms(overlapped, layers, Optional.of(comm), A100, topo);
        MegatronTerms a = MegatronExecution.terms(after, layers, Optional.of(comm), A100, topo);
        String what = overlapped + ": after the backward pass " + a.value(ExecutionTerm.DATA_COMM) + " ms, overlapped "
                + o.value(ExecutionTerm.DATA_COMM) + " ms";
        assertTrue(a.value(ExecutionTerm.DATA_COMM) >= o.value(ExecutionTerm.DATA_COMM) * (1 - 1e-12), what);
        assertOthersEqual(o, a, java.util.Set.of(ExecutionTerm.DATA_COMM), what);
    }

    /** Every term of two steps but {@code changed} is the same. */
    private static void assertOthersEqual(MegatronTerms x, MegatronTerms y, java.util.Set<ExecutionTerm> changed,
            String what) {
        for (ExecutionTerm t : ExecutionTerm.values()) {
            if (!changed.contains(t)) {
                assertEquals(x.value(t), y.value(t), 1e-9 * (1 + Math.abs(x.value(t))), t.key() + ": " + what);
            }
        }
    }

    /**
     * Gradient buffers of 16 bits never expose more data-parallel time than FP32 ones (the reduction moves the buffers'
     * own type, half the bytes), whatever the layout, ZeRO stage, network and when the reduction runs; only the
     * reduction and the optimizer's traffic change.
     */
    @Property(tries = 120)
    void sixteenBitBuffersNeverReduceLonger(@ForAll @IntRange(min = 1, max = 6) int logDp,
            @ForAll @IntRange(min = 0, max = 3) int logTp, @ForAll @IntRange(min = 0, max = 2) int logPp,
            @ForAll @IntRange(min = 1, max = 16) int microBatches, @ForAll @IntRange(min = 0, max = 3) int zero,
            @ForAll @IntRange(min = 0, max = 7) int logNetwork, @ForAll boolean after, @ForAll boolean tiny) {
        fit();
        TransformerSpec model = MODELS.get(tiny ? 1 : 0);
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 25.0 * (1 << logNetwork));
        Workload fp32 = Workload.builder(model.graph(2048)).batch(microBatches).phase(Phase.TRAIN).device(A100)
                .topology(topo).precision(Precision.BF16).recompute(Recompute.FULL)
                .parallelism(Parallelism.of(1 << logDp, 1 << logTp, 1 << logPp, microBatches).withZeroStage(zero))
                .gradReduceAfterBackward(after).sixteenBitGradients(false).build();
        Workload half = fp32.toBuilder().sixteenBitGradients(true).build();
        net.jqwik.api.Assume.that(refusal(half).isEmpty());
        MegatronTerms f = MegatronExecution.terms(fp32, layers, Optional.of(comm), A100, topo);
        MegatronTerms h = MegatronExecution.terms(half, layers, Optional.of(comm), A100, topo);
        String what = fp32 + ": FP32 buffers " + f.value(ExecutionTerm.DATA_COMM) + " ms, 16-bit "
                + h.value(ExecutionTerm.DATA_COMM) + " ms";
        assertTrue(h.value(ExecutionTerm.DATA_COMM) <= f.value(ExecutionTerm.DATA_COMM) * (1 + 1e-12), what);
        if (after && zero < 3) {
            // exposed whole: half the bytes take less time (the latencies stay)
            assertTrue(h.value(ExecutionTerm.DATA_COMM) < f.value(ExecutionTerm.DATA_COMM), what);
        }
        assertOthersEqual(f, h, java.util.Set.of(ExecutionTerm.DATA_COMM, ExecutionTerm.OPTIMIZER), what);
    }
}
