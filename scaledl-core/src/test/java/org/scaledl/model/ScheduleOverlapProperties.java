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
import org.scaledl.workload.GradReduce;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * What the schedule overlaps never makes a step slower, and changes nothing else: reducing the gradients after the
 * backward pass never hides more than overlapping them does (for any layout, ZeRO stage, micro-batching and
 * network, the exposed data-parallel time with {@link Workload#gradReduce()} is at least the
 * overlapped one), nor do FP32 gradient buffers reduce faster than 16-bit ones, nor does the experts' all-to-all
 * run behind another micro-batch ({@link Workload#expertCommOverlap()}) expose more than on the critical path, nor
 * do CUDA graphs of the whole iteration change anything but the host's layer steps (the device model and collectives
 * fitted on the test excerpts of the kernel data, as in {@link MegatronExecutionTest}).
 */
class ScheduleOverlapProperties {
    private static final Device A100 = DeviceCatalog.bundled().require("NVIDIA A100-SXM4-80GB");
    /** GPT 1.3B, and a model so small that its whole reduction is one bucket. */
    private static final List<TransformerSpec> MODELS = List.of(TransformerSpec.decoder("gpt-1.3b", 2048, 16, 24,
            50257).maxPositions(2048).build(), TransformerSpec.decoder("gpt-tiny", 128, 8, 4, 1024).maxPositions(2048)
            .build());
    private static final TransformerSpec MIXTRAL = org.scaledl.transformer.HuggingFaceConfig.read(
            java.nio.file.Path.of("src/test/resources/transformers/mixtral-8x7b/config.json"));
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
        Workload after = overlapped.toBuilder().gradReduce(GradReduce.AFTER_BACKWARD).build();
        // only layouts the predictor runs (every one here: checked all the same)
        MegatronTerms[] pair = termsOfBoth(overlapped, after, topo);
        MegatronTerms o = pair[0];
        MegatronTerms a = pair[1];
        String what = said(overlapped, ExecutionTerm.DATA_COMM, "overlapped", o, "after the backward pass", a);
        assertTrue(a.value(ExecutionTerm.DATA_COMM) >= o.value(ExecutionTerm.DATA_COMM) * (1 - 1e-12), what);
        assertOthersEqual(o, a, java.util.Set.of(ExecutionTerm.DATA_COMM), what);
    }

    /**
     * With the distributed optimizer (ZeRO 1 or 2), the updated weights' gather after the optimizer step
     * ({@link GradReduce#GATHER_AFTER_STEP}, Megatron core without {@code overlap_param_gather}) exposes no less than
     * overlapping it and no more than reducing everything after the backward pass; nothing but the data-parallel term
     * changes.
     */
    @Property(tries = 120)
    void theGatherAfterTheStepLiesBetween(@ForAll @IntRange(min = 1, max = 6) int logDp,
            @ForAll @IntRange(min = 0, max = 3) int logTp, @ForAll @IntRange(min = 0, max = 2) int logPp,
            @ForAll @IntRange(min = 1, max = 16) int microBatches, @ForAll @IntRange(min = 1, max = 2) int zero,
            @ForAll @IntRange(min = 0, max = 7) int logNetwork, @ForAll boolean tiny) {
        fit();
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 25.0 * (1 << logNetwork));
        Workload overlapped = Workload.builder(MODELS.get(tiny ? 1 : 0).graph(2048)).batch(microBatches)
                .phase(Phase.TRAIN).device(A100).topology(topo).precision(Precision.BF16).recompute(Recompute.FULL)
                .parallelism(Parallelism.of(1 << logDp, 1 << logTp, 1 << logPp, microBatches).withZeroStage(zero))
                .build();
        Workload gather = overlapped.toBuilder().gradReduce(GradReduce.GATHER_AFTER_STEP).build();
        Workload after = overlapped.toBuilder().gradReduce(GradReduce.AFTER_BACKWARD).build();
        MegatronTerms[] first = termsOfBoth(overlapped, gather, topo);
        MegatronTerms[] second = termsOfBoth(gather, after, topo);
        String what = said(overlapped, ExecutionTerm.DATA_COMM, "overlapped", first[0], "gather after the step",
                first[1]) + ", after the backward pass " + second[1].value(ExecutionTerm.DATA_COMM) + " ms";
        double o = first[0].value(ExecutionTerm.DATA_COMM);
        double g = first[1].value(ExecutionTerm.DATA_COMM);
        double a = second[1].value(ExecutionTerm.DATA_COMM);
        assertTrue(g >= o * (1 - 1e-12) && g <= a * (1 + 1e-12), what);
        assertOthersEqual(first[0], first[1], java.util.Set.of(ExecutionTerm.DATA_COMM), what);
    }

    /** The terms of two workloads on one network; a layout the predictor refuses is not a case (jqwik's assumption). */
    private static MegatronTerms[] termsOfBoth(Workload a, Workload b, Topology topo) {
        net.jqwik.api.Assume.that(refusal(a).isEmpty() && refusal(b).isEmpty());
        return new MegatronTerms[] {MegatronExecution.terms(a, layers, Optional.of(comm), A100, topo),
            MegatronExecution.terms(b, layers, Optional.of(comm), A100, topo)};
    }

    /** A failure's description: the job and one term under either setting. */
    private static String said(Workload w, ExecutionTerm t, String aName, MegatronTerms a, String bName,
            MegatronTerms b) {
        return w + ": " + aName + " " + a.value(t) + " ms, " + bName + " " + b.value(t) + " ms";
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
     * reduction and the optimizer's traffic change (and, with a pipeline, a tied head's copy's reduction with the
     * first stage, no longer either).
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
                .gradReduce(after ? GradReduce.AFTER_BACKWARD : GradReduce.OVERLAPPED).sixteenBitGradients(false)
                .build();
        Workload half = fp32.toBuilder().sixteenBitGradients(true).build();
        MegatronTerms[] pair = termsOfBoth(fp32, half, topo);
        MegatronTerms f = pair[0];
        MegatronTerms h = pair[1];
        String what = said(fp32, ExecutionTerm.DATA_COMM, "FP32 buffers", f, "16-bit", h);
        assertTrue(h.value(ExecutionTerm.DATA_COMM) <= f.value(ExecutionTerm.DATA_COMM) * (1 + 1e-12), what);
        if (after && zero < 3) {
            // exposed whole: half the bytes take less time (the latencies stay)
            assertTrue(h.value(ExecutionTerm.DATA_COMM) < f.value(ExecutionTerm.DATA_COMM), what);
        }
        // (the pipeline's time holds a tied head's copy's gradient reduction with the first stage: in the buffers'
        // type too, never longer)
        assertTrue(h.value(ExecutionTerm.PIPELINE_COMM) <= f.value(ExecutionTerm.PIPELINE_COMM) * (1 + 1e-12),
                said(fp32, ExecutionTerm.PIPELINE_COMM, "FP32 buffers", f, "16-bit", h));
        assertOthersEqual(f, h, java.util.Set.of(ExecutionTerm.DATA_COMM, ExecutionTerm.OPTIMIZER,
                ExecutionTerm.PIPELINE_COMM), what);
    }

    /**
     * The experts' all-to-all behind another micro-batch's compute never exposes more than on the critical path, nor
     * less than the unpaired micro-batch's share of it (one of {@code m}), leaves the data-parallel collectives at
     * most the window it hides in, changes nothing else, and changes nothing with one micro-batch, whatever the expert group, the tensor parallelism, the micro-batching, the recomputation
     * Megatron core allows with it and the network.
     */
    @Property(tries = 60)
    void overlappedAllToAllNeverExposesMore(@ForAll @IntRange(min = 1, max = 3) int logExpert,
            @ForAll @IntRange(min = 0, max = 2) int logExtraDp, @ForAll @IntRange(min = 0, max = 1) int logTp,
            @ForAll @IntRange(min = 1, max = 8) int microBatches, @ForAll @IntRange(min = 0, max = 9) int logNetwork,
            @ForAll boolean selective) {
        fit();
        int e = 1 << logExpert;
        Topology topo = Topology.of(4, Topology.Link.NVSWITCH, 300, 3.125 * (1 << logNetwork));
        Workload plain = Workload.builder(MIXTRAL.graph(512)).batch(microBatches).phase(Phase.TRAIN).device(A100)
                .topology(topo).precision(Precision.BF16).recompute(selective ? Recompute.SELECTIVE : Recompute.NONE)
                .parallelism(Parallelism.of(e << logExtraDp, 1 << logTp, 1, microBatches)
                        .withSequenceParallel(logTp > 0).withExpert(e, 1)).build();
        Workload overlapped = plain.toBuilder().expertCommOverlap(true).build();
        MegatronTerms[] pair = termsOfBoth(plain, overlapped, topo);
        MegatronTerms p = pair[0];
        MegatronTerms o = pair[1];
        String what = said(plain, ExecutionTerm.EXPERT_COMM, "on the critical path", p, "overlapped", o);
        assertTrue(p.value(ExecutionTerm.EXPERT_COMM) > 0, what);
        assertTrue(o.value(ExecutionTerm.EXPERT_COMM) >= p.value(ExecutionTerm.EXPERT_COMM) / microBatches
                * (1 - 1e-12), what);
        assertTrue(o.value(ExecutionTerm.EXPERT_COMM) <= p.value(ExecutionTerm.EXPERT_COMM) * (1 + 1e-12), what);
        if (microBatches == 1) {
            assertEquals(p.value(ExecutionTerm.EXPERT_COMM), o.value(ExecutionTerm.EXPERT_COMM), 0, what);
        }
        // the data-parallel collectives lose at most the window the hidden all-to-all took (inside the node: the
        // exposed exchange the micro-batch no longer waits for; over the network: the compute it now hides behind)
        double hidden = p.value(ExecutionTerm.EXPERT_COMM) - o.value(ExecutionTerm.EXPERT_COMM);
        double lost = o.value(ExecutionTerm.DATA_COMM) - p.value(ExecutionTerm.DATA_COMM);
        assertTrue(lost >= -1e-9 * (1 + p.value(ExecutionTerm.DATA_COMM)), what + "; data_comm " + lost);
        assertTrue(lost <= hidden + 1e-9 * (1 + hidden), what + "; data_comm " + lost + " > " + hidden);
        assertOthersEqual(p, o, java.util.Set.of(ExecutionTerm.EXPERT_COMM, ExecutionTerm.DATA_COMM), what);
    }

    /**
     * CUDA graphs of the whole iteration drop the host's layer steps (the experts' too) and change no other term,
     * whatever the layout, micro-batching, phase and the experts; graphs of layers change nothing. So, for any
     * coefficients, a step with them is never slower.
     */
    @Property(tries = 60)
    void graphsOfTheIterationOnlyDropTheHostsLayerSteps(@ForAll @IntRange(min = 0, max = 2) int logDp,
            @ForAll @IntRange(min = 0, max = 1) int logTp, @ForAll @IntRange(min = 0, max = 1) int logPp,
            @ForAll @IntRange(min = 1, max = 8) int microBatches, @ForAll boolean experts, @ForAll boolean infer) {
        fit();
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 400);
        Parallelism par = Parallelism.of(experts ? 2 << logDp : 1 << logDp, 1 << logTp, 1 << logPp, microBatches);
        Workload none = Workload.builder(experts ? MIXTRAL.graph(512) : MODELS.get(0).graph(2048)).batch(microBatches)
                .phase(infer ? Phase.INFER : Phase.TRAIN).device(A100).topology(topo).precision(Precision.BF16)
                .recompute(Recompute.NONE).parallelism(experts ? par.withExpert(2, 1) : par).build();
        Workload layered = none.toBuilder().cudaGraphs(org.scaledl.workload.CudaGraphs.LAYERS).build();
        Workload whole = none.toBuilder().cudaGraphs(org.scaledl.workload.CudaGraphs.ITERATION).build();
        MegatronTerms[] pair = termsOfBoth(none, whole, topo);
        MegatronTerms n = pair[0];
        MegatronTerms w = pair[1];
        String what = said(none, ExecutionTerm.LAYER_STEP, "without graphs", n, "with the iteration's", w);
        assertTrue(n.value(ExecutionTerm.LAYER_STEP) > 0, what);
        assertEquals(0, w.value(ExecutionTerm.LAYER_STEP), what);
        assertEquals(0, w.value(ExecutionTerm.EXPERT_LAYER_STEP), what);
        assertEquals(experts, n.value(ExecutionTerm.EXPERT_LAYER_STEP) > 0, what);
        assertOthersEqual(n, w, java.util.Set.of(ExecutionTerm.LAYER_STEP, ExecutionTerm.EXPERT_LAYER_STEP), what);
        assertOthersEqual(n, MegatronExecution.terms(layered, layers, Optional.of(comm), A100, topo),
                java.util.Set.of(), what);
    }

    /**
     * The distributed optimizer (ZeRO 1) reduce-scatters the gradients in their buffers' type and gathers the updated
     * weights in theirs: with 16-bit buffers that is exactly an all-reduce's time (ZeRO 0's), with FP32 buffers less
     * (the 16-bit weights gathered in half the bytes), whatever the layout and the network, the reduction after the
     * backward pass.
     */
    @Property(tries = 80)
    void theDistributedOptimizerGathersTheWeightsInTheirOwnType(@ForAll @IntRange(min = 1, max = 6) int logDp,
            @ForAll @IntRange(min = 0, max = 3) int logTp, @ForAll @IntRange(min = 0, max = 2) int logPp,
            @ForAll @IntRange(min = 1, max = 16) int microBatches, @ForAll @IntRange(min = 0, max = 7) int logNetwork,
            @ForAll boolean sixteen, @ForAll boolean tiny) {
        fit();
        TransformerSpec model = MODELS.get(tiny ? 1 : 0);
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 25.0 * (1 << logNetwork));
        Workload zero0 = Workload.builder(model.graph(2048)).batch(microBatches).phase(Phase.TRAIN).device(A100)
                .topology(topo).precision(Precision.BF16).recompute(Recompute.FULL)
                .parallelism(Parallelism.of(1 << logDp, 1 << logTp, 1 << logPp, microBatches))
                .gradReduce(GradReduce.AFTER_BACKWARD).sixteenBitGradients(sixteen).build();
        Workload zero1 = zero0.toBuilder().parallelism(zero0.parallelism().withZeroStage(1)).build();
        MegatronTerms[] pair = termsOfBoth(zero0, zero1, topo);
        String what = said(zero1, ExecutionTerm.DATA_COMM, "ZeRO 0", pair[0], "ZeRO 1", pair[1]);
        double all = pair[0].value(ExecutionTerm.DATA_COMM);
        double distributed = pair[1].value(ExecutionTerm.DATA_COMM);
        if (sixteen) {
            assertEquals(all, distributed, 1e-9 * all, what);
        } else {
            assertTrue(distributed < all, what);
        }
    }

    /**
     * The interleaved schedule's per-chunk reduction hides within the same last backward passes a bucketed one does:
     * over a slow network its exposed reduction is one chunk's as much as without interleaving (divided by the
     * chunks, a 4.5 s reduction finished inside a 2.5 s step).
     */
    @org.junit.jupiter.api.Test
    void theInterleavedScheduleHidesNoMoreOfTheReduction() {
        fit();
        // (nodes of 2 GPUs: the data-parallel group of 8 crosses the slow network)
        Topology topo = Topology.of(2, Topology.Link.NVSWITCH, 300, 25);
        Workload one = Workload.builder(MODELS.get(0).graph(2048)).batch(8).phase(Phase.TRAIN).device(A100)
                .topology(topo).precision(Precision.BF16).recompute(Recompute.NONE)
                .parallelism(Parallelism.of(8, 1, 4, 8).withZeroStage(1)).build();
        Workload two = one.toBuilder().parallelism(one.parallelism().withVirtualStages(2)).build();
        MegatronTerms[] pair = termsOfBoth(one, two, topo);
        String what = said(one, ExecutionTerm.DATA_COMM, "one chunk", pair[0], "two", pair[1]);
        assertTrue(pair[0].value(ExecutionTerm.DATA_COMM) > 0, what);
        assertEquals(1, pair[1].value(ExecutionTerm.DATA_COMM) / pair[0].value(ExecutionTerm.DATA_COMM), 0.1, what);
    }

    /**
     * A mixture of experts whose experts are whole on their ranks (expert tensor parallelism 1) and that has no
     * shared expert runs no tensor-parallel collective around its experts with sequence parallelism (the dispatcher
     * sends each rank's slice of the sequence): Mixtral at tensor 2 runs its attention's alone, about half a dense
     * model's of its width and depth; with its experts split over the tensor ranks, it runs them again.
     */
    @org.junit.jupiter.api.Test
    void aMixtureOfExpertsWithoutASharedOneRunsNoTensorCollectiveAroundItsExperts() {
        fit();
        Topology topo = Topology.of(8, Topology.Link.NVSWITCH, 300, 1600);
        TransformerSpec dense = TransformerSpec.decoder("mixtral-shape", 4096, 32, 32, 32000).kvHeads(8).ffn(14336)
                .ffnKind(TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .maxPositions(4096).build();
        java.util.function.BiFunction<TransformerSpec, Parallelism, Workload> job = (m, par) -> Workload.builder(
                m.graph(512)).batch(1).phase(Phase.TRAIN).device(A100).topology(topo).precision(Precision.BF16)
                .recompute(Recompute.NONE).parallelism(par).build();
        Parallelism tp2 = Parallelism.of(4, 2, 1, 1).withSequenceParallel(true);
        MegatronTerms[] pair = termsOfBoth(job.apply(MIXTRAL, tp2.withExpert(8, 1)), job.apply(dense, tp2), topo);
        double ratio = pair[0].value(ExecutionTerm.TENSOR_COMM) / pair[1].value(ExecutionTerm.TENSOR_COMM);
        assertEquals(0.5, ratio, 0.06, "Mixtral's tensor collectives over a dense model's: " + ratio);
        MegatronTerms split = termsOfBoth(job.apply(MIXTRAL, tp2.withExpert(4, 2)), job.apply(dense, tp2), topo)[0];
        assertEquals(1, split.value(ExecutionTerm.TENSOR_COMM) / pair[1].value(ExecutionTerm.TENSOR_COMM), 0.06,
                "experts split over the tensor ranks");
    }

    /**
     * Megatron core's all-to-all dispatcher sorts a rank's received token copies by local expert and back (more than
     * one expert a rank), which HybridEP's permutation does as it writes them: in 16 bits the all-to-all's step
     * spends more on its experts' other layers exactly where a rank holds several experts, and its products cost the
     * same, whatever the layout, micro-batching and network.
     */
    @Property(tries = 40)
    void theAllToAllDispatcherSortsWhereARankHoldsSeveralExperts(@ForAll @IntRange(min = 1, max = 3) int logExpert,
            @ForAll @IntRange(min = 0, max = 1) int logTp, @ForAll @IntRange(min = 1, max = 4) int microBatches,
            @ForAll @IntRange(min = 0, max = 9) int logNetwork, @ForAll boolean infer) {
        fit();
        int e = 1 << logExpert;
        Topology topo = Topology.of(4, Topology.Link.NVSWITCH, 300, 3.125 * (1 << logNetwork));
        Workload hybrid = Workload.builder(MIXTRAL.graph(512)).batch(microBatches)
                .phase(infer ? Phase.INFER : Phase.TRAIN).device(A100).topology(topo).precision(Precision.BF16)
                .parallelism(Parallelism.of(e, 1 << logTp, 1, microBatches).withSequenceParallel(logTp > 0)
                        .withExpert(e, 1)).moeDispatcher(org.scaledl.workload.MoeDispatcher.HYBRIDEP).build();
        Workload alltoall = hybrid.toBuilder().moeDispatcher(org.scaledl.workload.MoeDispatcher.ALLTOALL).build();
        MegatronTerms[] pair = termsOfBoth(alltoall, hybrid, topo);
        String what = said(alltoall, ExecutionTerm.EXPERT_OTHER, "alltoall", pair[0], "hybridep", pair[1]);
        if (e < 8) {
            assertTrue(pair[0].value(ExecutionTerm.EXPERT_OTHER) > pair[1].value(ExecutionTerm.EXPERT_OTHER) * (1
                    + 1e-6), what);
        } else {
            assertEquals(pair[1].value(ExecutionTerm.EXPERT_OTHER), pair[0].value(ExecutionTerm.EXPERT_OTHER), 0,
                    what + " (one expert a rank: nothing to sort)");
        }
        for (ExecutionTerm t : ExecutionTerm.values()) {
            if (t.dense()) {
                assertEquals(pair[1].value(t), pair[0].value(t), 1e-9 * (1 + pair[1].value(t)), t.key() + ": " + what);
            }
        }
    }
}
