package org.scaledl.model;

import com.google.common.collect.ImmutableList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Workload;

/**
 * The basis functions of the layer-wise model. A layer of family {@code f} costs
 *
 * <pre>
 *   t(layer) = Σ_k θ[f,k] · φ_k(layer),   θ ≥ 0
 * </pre>
 *
 * with the per-layer basis {@code φ} ({@link #LAYER_TERMS} terms, FLOPs and bytes include the backward pass in
 * training, {@code p} = threads per worker):
 * <ol>
 *   <li>{@code dispatch}: operator launches (1 forward, +1 backward when gradients flow)</li>
 *   <li>{@code flops/p}: parallel compute</li>
 *   <li>{@code flops}: serial compute (with {@code flops/p}, an Amdahl split)</li>
 *   <li>{@code bytes/p}, {@code bytes}: memory traffic, likewise split</li>
 *   <li>{@code flops·F0/(F+F0)}: the extra per-FLOP cost of small operators ({@code F} = forward FLOPs,
 *       {@code F0} = 10⁶), which makes the cost a concave, saturating function of size</li>
 *   <li>{@code dispatch·(p−1)}, {@code flops·(p−1)}, {@code bytes·(p−1)}: the cost of threading itself
 *       (synchronisation, oversubscription, shared caches), which on small or shared machines can make more
 *       threads slower; with the terms above the thread count acts non-monotonically where the data say so</li>
 * </ol>
 * and workload-level terms ({@link #GLOBAL_TERMS}): a per-iteration overhead for each phase, the optimizer's
 * per-parameter and per-parameter-tensor cost in training, ring all-reduce bandwidth
 * ({@code 2(n−1)/n · gradient bytes}) and latency ({@code 2(n−1) · buckets}) terms, whose fitted coefficients
 * absorb the share not overlapped with backward, worker contention ({@code (n−1)·bytes}, {@code (n−1)·flops}) and a
 * data-parallel fixed cost. A workload's <em>design row</em> sums each layer's basis into its family's block and
 * appends the workload terms, so the model is linear in θ: the whole-workload total is {@code row · θ}.
 *
 * <pre>{@code
 * double[] x = LayerBasis.standard().row(workload);   // width() values
 * }</pre>
 *
 * <p>Feature analysis is cached per graph instance (weakly), and per (graph, batch, phase) the per-family sums that
 * a row is made of, so rows are cheap after the first call for a batch size. Thread-safe.
 */
public final class LayerBasis {
    /** Per-layer terms. */
    public static final List<String> LAYER_TERMS = List.of("dispatch", "flops/p", "flops", "bytes/p", "bytes",
            "small-op flops", "dispatch·(p-1)", "flops·(p-1)", "bytes·(p-1)");
    /** Workload-level terms. */
    public static final List<String> GLOBAL_TERMS = List.of("overhead:train", "overhead:infer", "optimizer:params",
            "optimizer:tensors", "allreduce:bytes", "allreduce:latency", "contention:bytes", "contention:flops",
            "ddp:fixed");
    static final double SMALL_OP_FLOPS = 1e6;

    private static final List<OpFamily> FAMILIES = List.of(OpFamily.values());
    private static final LayerBasis STANDARD = new LayerBasis();

    /** Per-graph analysis, held weakly so that graphs a caller drops can be collected. */
    private final Map<ModelGraph, Analysis> cache = Collections.synchronizedMap(new WeakHashMap<>());

    private record Analysis(FeatureExtractor extractor, long[] gradientStats, Map<Long, double[]> sums) {
    }

    /** Cached (batch, phase) entries per graph before the cache is cleared. */
    private static final int MAX_CACHED_BATCHES = 1024;
    /** Per-family sums kept per (graph, batch, phase): dispatch, flops, bytes, small-op flops. */
    private static final int SUMS = 4;

    private LayerBasis() {
    }

    /** The basis described above. */
    public static LayerBasis standard() {
        return STANDARD;
    }

    /** Number of columns of a design row. */
    public int width() {
        return FAMILIES.size() * LAYER_TERMS.size() + GLOBAL_TERMS.size();
    }

    /** Column index of a family's term. */
    public static int column(OpFamily f, int term) {
        return f.ordinal() * LAYER_TERMS.size() + term;
    }

    /** Column index of a workload-level term. */
    public static int globalColumn(int term) {
        return OpFamily.values().length * LAYER_TERMS.size() + term;
    }

    /** Names of all columns, e.g. {@code CONV:flops/p} or {@code allreduce:bytes}. */
    public List<String> columnNames() {
        List<String> out = new ArrayList<>();
        for (OpFamily f : FAMILIES) {
            for (String t : LAYER_TERMS) {
                out.add(f + ":" + t);
            }
        }
        out.addAll(GLOBAL_TERMS);
        return ImmutableList.copyOf(out);
    }

    /** The (cached) feature analysis of a graph. */
    public FeatureExtractor extractor(ModelGraph g) {
        return analysis(g).extractor();
    }

    private Analysis analysis(ModelGraph g) {
        Analysis a = cache.get(g);
        if (a == null) {
            a = new Analysis(FeatureExtractor.of(g), gradientStats(g), new ConcurrentHashMap<>());
            cache.put(g, a);
        }
        return a;
    }

    /** Layer features of a workload. */
    public List<LayerFeatures> features(Workload w) {
        return extractor(w.graph()).extract(w.batch(), w.phase());
    }

    /**
     * The per-layer basis {@code φ} of one layer into {@code out[0..LAYER_TERMS)}.
     *
     * @param lf  the layer's features
     * @param w   the workload (threads, phase)
     * @param out receives the terms (modified)
     */
    public static void layerTerms(LayerFeatures lf, Workload w, double[] out) {
        if (!lf.executes()) {
            Arrays.fill(out, 0, LAYER_TERMS.size(), 0);
            return;
        }
        double p = w.threads();
        double flops = lf.flopsFwd() + lf.flopsBwd();
        double bytes = lf.bytesFwd() + lf.bytesBwd();
        out[0] = 1 + (lf.flopsBwd() > 0 || lf.bytesBwd() > 0 ? 1 : 0);
        out[1] = flops / p;
        out[2] = flops;
        out[3] = bytes / p;
        out[4] = bytes;
        out[5] = flops * SMALL_OP_FLOPS / (lf.flopsFwd() + SMALL_OP_FLOPS);
        out[6] = out[0] * (p - 1);
        out[7] = flops * (p - 1);
        out[8] = bytes * (p - 1);
    }

    /** The design row of a workload: per-family sums of {@link #layerTerms} followed by the workload terms. */
    public double[] row(Workload w) {
        double[] sums = familySums(w);
        double[] row = new double[width()];
        double p = w.threads();
        double flops = 0;
        double bytes = 0;
        int terms = LAYER_TERMS.size();
        for (int f = 0; f < FAMILIES.size(); f++) {
            double dispatch = sums[f * SUMS];
            double fl = sums[f * SUMS + 1];
            double by = sums[f * SUMS + 2];
            int base = f * terms;
            row[base] = dispatch;
            row[base + 1] = fl / p;
            row[base + 2] = fl;
            row[base + 3] = by / p;
            row[base + 4] = by;
            row[base + 5] = sums[f * SUMS + 3];
            row[base + 6] = dispatch * (p - 1);
            row[base + 7] = fl * (p - 1);
            row[base + 8] = by * (p - 1);
            flops += fl;
            bytes += by;
        }
        globalTerms(w, flops, bytes, row);
        return row;
    }

    /**
     * Per-family sums of the thread-independent layer terms (dispatch, FLOPs, bytes, small-op FLOPs) for the
     * workload's graph, batch and phase. Every other layer term is these divided or multiplied by a function of the
     * thread count, so the sums are cached per (graph, batch, phase): a scheduler scoring many placements of one
     * model pays for the layer walk once.
     */
    private double[] familySums(Workload w) {
        Analysis a = analysis(w.graph());
        long key = (long) w.batch() << 1 | (w.phase() == Phase.TRAIN ? 1 : 0);
        double[] sums = a.sums().get(key);
        if (sums != null) {
            return sums;
        }
        sums = new double[FAMILIES.size() * SUMS];
        double[] t = new double[LAYER_TERMS.size()];
        Workload oneThread = w.threads() == 1 ? w : w.toBuilder().threads(1).build();
        for (LayerFeatures lf : a.extractor().extract(w.batch(), w.phase())) {
            layerTerms(lf, oneThread, t);
            int base = lf.family().ordinal() * SUMS;
            sums[base] += t[0];
            sums[base + 1] += t[2];
            sums[base + 2] += t[4];
            sums[base + 3] += t[5];
        }
        if (a.sums().size() >= MAX_CACHED_BATCHES) {
            a.sums().clear();
        }
        a.sums().put(key, sums);
        return sums;
    }

    /** Workload-level terms into {@code row} from the global columns on. */
    void globalTerms(Workload w, double flops, double bytes, double[] row) {
        boolean train = w.phase() == Phase.TRAIN;
        int g = globalColumn(0);
        long[] grad = analysis(w.graph()).gradientStats();
        double n = w.worldSize();
        row[g] = train ? 1 : 0;
        row[g + 1] = train ? 0 : 1;
        row[g + 2] = train ? grad[0] : 0;
        row[g + 3] = train ? grad[1] : 0;
        boolean dp = train && n > 1;
        int ranks = w.worldSize();
        row[g + 4] = dp ? Collectives.ringVolume(ranks) * grad[2] : 0;
        row[g + 5] = dp ? Collectives.ringSteps(ranks) * Collectives.buckets(grad[2]) : 0;
        row[g + 6] = (n - 1) * bytes;
        row[g + 7] = (n - 1) * flops;
        row[g + 8] = dp ? 1 : 0;
    }

    /** {parameters, parameter tensors, gradient bytes} of a graph. */
    private static long[] gradientStats(ModelGraph g) {
        long params = 0;
        long tensors = 0;
        long bytes = 0;
        for (TensorInfo t : g.tensors().values()) {
            if (t.role() == TensorRole.PARAMETER) {
                params += t.elements(1);
                tensors++;
                bytes += t.bytes(1);
            }
        }
        return new long[] {params, tensors, bytes};
    }
}
