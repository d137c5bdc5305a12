package org.scaledl.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;
import org.scaledl.Checks;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.exec.MegatronExecution;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;

/**
 * Every valid way to train a transformer on a number of GPUs, ranked by predicted iteration time: tensor-parallel
 * degrees that divide the heads and stay inside a node, pipeline degrees that divide the rest and the layers, the
 * data-parallel degree that remains, micro-batch sizes that divide the global batch over the replicas,
 * recomputation (none, selective, full), sequence parallelism, ZeRO stages 0 and 1, and the interleaved schedule
 * (2 or 4 chunks per stage where the layers and micro-batches allow). Layouts that need more memory per GPU than the
 * device has are kept but marked and ranked after those that fit.
 *
 * <pre>{@code
 * List<LayoutSearch.Layout> best = new LayoutSearch(gpuPredictor, spec.graph(2048), a100, 512, 1536)
 *         .topology(Topology.of(8, Topology.Link.NVSWITCH, 300, 1600)).precision(Precision.FP16).search();
 * }</pre>
 *
 * <p>A layout costs the predictor's fast path (the per-layer costs of a configuration are computed once and shared
 * by the layouts that differ only in pipeline, data parallelism and schedule).
 */
public final class LayoutSearch {
    private final RuntimePredictor predictor;
    private final ModelGraph graph;
    private final Device device;
    private final int gpus;
    private final int globalBatch;
    private Topology topology;
    private Precision precision = Precision.FP16;

    /**
     * A search.
     *
     * @param predictor   a device predictor
     * @param graph       a transformer's graph ({@code TransformerSpec.graph(seq)})
     * @param device      the GPU
     * @param gpus        GPUs in all (positive)
     * @param globalBatch sequences per iteration over all replicas (positive)
     * @throws IllegalArgumentException for a graph not built from a configuration or non-positive counts
     */
    public LayoutSearch(RuntimePredictor predictor, ModelGraph graph, Device device, int gpus, int globalBatch) {
        this.predictor = Objects.requireNonNull(predictor);
        this.graph = Objects.requireNonNull(graph);
        this.device = Objects.requireNonNull(device);
        Checks.argument(graph.transformer().isPresent(), "layout search needs a transformer built from its "
                + "configuration; %s is not one", graph.name());
        Checks.argument(gpus > 0 && globalBatch > 0, "GPUs and global batch must be positive: %s, %s", gpus,
                globalBatch);
        this.gpus = gpus;
        this.globalBatch = globalBatch;
        this.topology = Topology.assumedFor(device);
    }

    /** The machines (default: the device's standard server). */
    public LayoutSearch topology(Topology value) {
        this.topology = Objects.requireNonNull(value);
        return this;
    }

    /** The precision (default FP16 mixed precision). */
    public LayoutSearch precision(Precision value) {
        this.precision = Objects.requireNonNull(value);
        return this;
    }

    /**
     * One way to run the job.
     *
     * @param parallelism the degrees, micro-batches, sequence parallelism, ZeRO stage and chunks
     * @param microBatch  sequences per micro-batch
     * @param recompute   activation recomputation
     * @param millis      predicted iteration time, ms
     * @param memoryGb    predicted memory per GPU, GiB
     * @param fits        whether that memory fits the device
     */
    public record Layout(Parallelism parallelism, int microBatch, Recompute recompute, double millis, double memoryGb,
            boolean fits) {
        /** Sequences per second over all GPUs at the layout's global batch. */
        public double sequencesPerSecond(int globalBatch) {
            return globalBatch / (millis / 1000);
        }
    }

    /** Every valid layout, those that fit first, fastest first. */
    public List<Layout> search() {
        TransformerShape ts = graph.transformer().get();
        List<Layout> out = new ArrayList<>();
        for (int t = 1; t <= Math.min(gpus, topology.gpusPerNode()); t *= 2) {
            if (gpus % t != 0 || ts.heads() % t != 0 || (ts.kvHeads() % t != 0 && t % ts.kvHeads() != 0)) {
                continue;
            }
            for (int p = 1; p <= gpus / t && p <= ts.layers(); p++) {
                if ((gpus / t) % p != 0 || MegatronExecution.chunkSizes(ts.layers(), p, ts.mtpLayers()) == null) {
                    continue;
                }
                int d = gpus / (t * p);
                if (globalBatch % d != 0) {
                    continue;
                }
                int perReplica = globalBatch / d;
                for (int b = 1; b <= perReplica && b <= 64; b *= 2) {
                    if (perReplica % b != 0) {
                        continue;
                    }
                    int m = perReplica / b;
                    for (int v : new int[] {1, 2, 4}) {
                        if (v > 1 && (p == 1 || MegatronExecution.chunkSizes(ts.layers(), p * v, ts.mtpLayers()) == null
                                || m % p != 0)) {
                            continue;
                        }
                        for (boolean sp : t > 1 ? new boolean[] {false, true} : new boolean[] {false}) {
                            for (int zero : d > 1 ? new int[] {0, 1} : new int[] {0}) {
                                Parallelism par = new Parallelism(d, t, p, m, sp, zero, v, 1, 1, 1);
                                for (Recompute rc : new Recompute[] {Recompute.NONE, Recompute.SELECTIVE,
                                        Recompute.FULL}) {
                                    out.add(evaluate(par, b, rc));
                                }
                            }
                        }
                    }
                }
            }
        }
        out.sort(Comparator.comparing((Layout l) -> !l.fits()).thenComparingDouble(Layout::millis));
        return out;
    }

    private Layout evaluate(Parallelism par, int b, Recompute rc) {
        Workload w = Workload.builder(graph).batch(b * par.microBatches()).phase(Phase.TRAIN).device(device)
                .parallelism(par).precision(precision).recompute(rc).topology(topology).build();
        double ms = predictor.predictMillis(w);
        OptionalDouble mem = predictor.stage().memoryBytes(w);
        double gib = mem.isPresent() ? mem.getAsDouble() / (1L << 30) : Double.NaN;
        return new Layout(par, b, rc, ms, gib, !(gib > device.memoryGB()));
    }
}
