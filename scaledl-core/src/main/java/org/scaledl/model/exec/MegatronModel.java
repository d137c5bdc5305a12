package org.scaledl.model.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.model.file.Fields;

/**
 * The calibrated cost of a Megatron iteration from its {@link MegatronTerms}, a coefficient per
 * {@link ExecutionTerm}:
 *
 * <pre>
 *   gpu     = Σ_contractions max(c_class · f_i · (t_i/f_i)^0.84, f_i) + Σ_GPU terms c_k · v_k
 *                                                      (f_i the floor; other layers, collectives)
 *   host    = c_step · layer executions + c_expert_step · executions of layers with routed experts
 *   compute = ‖gpu, host‖₈, or ‖gpu, host‖_2.41 with routed experts   (a smooth max: the slower of the GPU and
 *                                                    the host's dispatch; softer where the host waits for the GPU)
 *   time    = compute + Σ_additive terms c_k · v_k   (hand-offs, transfers, optimizer, fixed)
 *             + c_dp · dp(stretch / c_dp)             (the exposed data-parallel reduction; stretch = compute / gpuRaw)
 * </pre>
 *
 * The data-parallel reduction ({@link ExecutionTerm.Fit#OVERLAP}) is what its overlap leaves exposed behind a backward
 * pass that lasts as this model times it: the micro-batch's uncalibrated time stretched by {@code compute / gpuRaw}
 * ({@link MegatronTerms#dataComm}, {@link #dataComm}); its coefficient scales the collective, not that pass. Where the
 * host paces the GPUs, the backward pass lasts longer and hides more of it, so a larger batch, which the GPUs take
 * longer over, is not predicted faster for the reduction the host's pace had hidden.
 *
 * The GPU works while the host dispatches the next layer's kernels, so whichever is slower sets the pace: small
 * micro-batches on many tensor-parallel ranks are bound by the framework's time per layer, large ones by the GPU.
 * The coefficients are fitted on measured iterations ({@code MegatronFit}); without a fit each is its term's prior
 * (every scale 1, the host and fixed costs 0). Saved by name: a file without a newer term's coefficient reads its
 * prior. Immutable.
 *
 * <pre>{@code
 * MegatronModel m = MegatronModel.uncalibrated().with(ExecutionTerm.DATA_COMM, 0.8);
 * double ms = m.millis(terms);
 * }</pre>
 */
public final class MegatronModel {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MegatronModel.class);
    private static final ExecutionTerm[] TERMS = ExecutionTerm.values();
    private static final String LEVEL_PRIOR_KEY = "level_prior_runs";
    private static final String BIASES_KEY = "fitted_biases";
    /** The most fitted biases a file may hold. */
    private static final int MAX_BIASES = 10_000;

    /**
     * The revision of the execution model's formulas a file's coefficients were fitted with, saved as
     * {@code execution_revision}: 2 since a pipeline's sends are timed hop by hop (over the network where neighbouring
     * stages sit on different nodes) and overlapped with the next chunk's pass under interleaving, and tensor and
     * context groups cross a node's edge only where the job's own do; 3 since the experts' all-to-all moves 16-bit
     * hidden states under FP8 and FP4 recipes too, a mixture of experts without a shared expert runs no
     * tensor-parallel collective with sequence parallelism and the embedding's gradient all-reduce shares its node's
     * network; 4 since the all-to-all dispatcher's own passes over the routed tokens are timed (sorted by local
     * expert and back, padded for FP8 and FP4 products) and DeepEP and HybridEP send a token once per rank holding
     * its experts; a file without it is revision 1. A file of another revision loads with a
     * warning: its coefficients were fitted to other formulas.
     */
    public static final int EXECUTION_REVISION = 4;
    private static final String REVISION_KEY = "execution_revision";
    /** The exponent of the smooth max of GPU and host time. */
    static final double SMOOTH = 8;
    /**
     * The exponent for jobs with routed experts, {@code ln 2 / ln(4/3) ≈ 2.41}: Megatron's token dispatcher copies
     * the tokens per expert to the host in every such layer (to size the all-to-all and the grouped products), so
     * the host waits for the GPU's queue to drain there and cannot run ahead past it: every stretch between two such
     * synchronisations (a layer, or a few where experts alternate with dense or state-space layers) costs
     * {@code max(h₁, g₁) + max(h₂, g₂)} over its two halves instead of {@code max(h, g)}. With the host's and the
     * GPU's work divided between the halves in proportions nothing tells (independent, uniform), that sum's
     * expectation is {@code max(g, h) + min(g, h)²/(3·max(g, h))}: {@code 4/3·g} where {@code h = g}, which this
     * p-norm gives exactly; at every other ratio the p-norm is at most 0.9 % below it.
     */
    static final double SMOOTH_SYNCED = Math.log(2) / Math.log(4.0 / 3);
    /**
     * The exponent a contraction's predicted time over its floor is raised to: the least-squares slope of measured on
     * predicted efficiency where the layer model predicts a GPU it never saw. Its trees learned the efficiency of
     * matrix products from other GPUs' kernels (the only tensor-core ones DeepBench's V100 and T4 FP16 products), and
     * there their predicted efficiencies spread more than the measured ones: with each GPU of the kernel data held out
     * in turn, the held-out products of at least 10¹⁰ FLOPs (the size of a cluster job's) regress their measured log
     * time over the peak's on the predicted one with slope {@code 0.84} ({@code scaledl evaluate-gpu}, "slope of
     * measured on predicted"). Shrinking each prediction's distance from its floor by that slope is what those folds
     * say predicts best; the class's coefficient then sets the level.
     */
    static final double EFFICIENCY_SHRINKAGE = 0.84;
    /**
     * The runs a calibration's level is shrunk toward the model's with, where the fit could not estimate it (an older
     * file, too few clusters): half a run.
     */
    public static final double DEFAULT_LEVEL_PRIOR_RUNS = 0.5;
    private static final MegatronModel UNCALIBRATED = new MegatronModel(priors(), new double[2], new double[2],
            DEFAULT_LEVEL_PRIOR_RUNS);

    /** Coefficients by term ordinal. */
    private final double[] c;
    private final double[] interval;
    /** The interval of mixtures of experts (the same as {@link #interval} where the fit had too few of them). */
    private final double[] expertInterval;
    private final double levelPriorRuns;
    /** The revision of the formulas its coefficients were fitted to ({@link #EXECUTION_REVISION}'s or older). */
    private final int revision;

    /** The biases its fit left on its own runs of one architecture on one GPU (said by their predictions). */
    private final List<FittedBias> biases;

    private MegatronModel(double[] c, double[] interval, double[] expertInterval, double levelPriorRuns) {
        this(c, interval, expertInterval, levelPriorRuns, EXECUTION_REVISION, List.of());
    }

    private MegatronModel(double[] c, double[] interval, double[] expertInterval, double levelPriorRuns,
            int revision, List<FittedBias> biases) {
        for (int i = 0; i < c.length; i++) {
            Checks.argument(Double.isFinite(c[i]) && c[i] >= 0, "coefficient %s must be finite and >= 0: %s",
                    TERMS[i].key(), c[i]);
        }
        for (double[] iv : new double[][] {interval, expertInterval}) {
            Checks.argument(iv.length == 2 && iv[0] <= 0 && iv[1] >= 0, "interval [%s] must hold a non-positive and "
                    + "a non-negative log-ratio", Arrays.toString(iv));
        }
        Checks.argument(levelPriorRuns > 0 && levelPriorRuns <= MAX_LEVEL_PRIOR_RUNS,
                "level prior runs must be in (0, %s]: %s", MAX_LEVEL_PRIOR_RUNS, levelPriorRuns);
        this.c = c;
        this.interval = interval;
        this.revision = revision;
        this.expertInterval = expertInterval;
        this.levelPriorRuns = levelPriorRuns;
        this.biases = List.copyOf(biases);
    }

    /** The most runs a calibration's level prior may weigh. */
    static final double MAX_LEVEL_PRIOR_RUNS = 100;

    private static double[] priors() {
        double[] p = new double[TERMS.length];
        for (ExecutionTerm t : TERMS) {
            p[t.ordinal()] = t.prior();
        }
        return p;
    }

    /**
     * A model from coefficients by term; a term not given takes its prior.
     *
     * @throws IllegalArgumentException for a negative or non-finite coefficient
     */
    public static MegatronModel of(Map<ExecutionTerm, Double> coefficients) {
        double[] c = priors();
        coefficients.forEach((t, v) -> c[t.ordinal()] = v);
        return new MegatronModel(c, new double[2], new double[2], DEFAULT_LEVEL_PRIOR_RUNS);
    }

    /** Every coefficient its prior: the physics alone. */
    public static MegatronModel uncalibrated() {
        return UNCALIBRATED;
    }

    /** A term's coefficient. */
    public double coefficient(ExecutionTerm term) {
        return c[term.ordinal()];
    }

    /** Every coefficient by term. */
    public Map<ExecutionTerm, Double> coefficients() {
        Map<ExecutionTerm, Double> out = new EnumMap<>(ExecutionTerm.class);
        for (ExecutionTerm t : TERMS) {
            out.put(t, c[t.ordinal()]);
        }
        return out;
    }

    /**
     * A copy with one coefficient replaced (without the biases its fit found: {@link #biases()} are the fitted
     * coefficients' own).
     */
    public MegatronModel with(ExecutionTerm term, double value) {
        double[] x = c.clone();
        x[term.ordinal()] = value;
        return new MegatronModel(x, interval, expertInterval, levelPriorRuns, revision, List.of());
    }

    /**
     * A copy with one interval for every job: the 90 % interval's log-ratio ends ({@code low ≤ 0 ≤ high}), mixtures
     * of experts included.
     */
    public MegatronModel withInterval(double low, double high) {
        return new MegatronModel(c, new double[] {low, high}, new double[] {low, high}, levelPriorRuns, revision,
                biases);
    }

    /** A copy with another interval for mixtures of experts ({@code low ≤ 0 ≤ high}), the other jobs' kept. */
    public MegatronModel withExpertInterval(double low, double high) {
        return new MegatronModel(c, interval, new double[] {low, high}, levelPriorRuns, revision, biases);
    }

    /**
     * How many runs of a user's cluster the model's own level is worth when a calibration on fewer than
     * {@code MegatronFit}'s term threshold moves only the level: the shrinkage of an empirical-Bayes mean, the
     * published clusters' spread of runs around their own level over the spread of those levels around the model's
     * (both from the fit's held-out errors), at least {@link #DEFAULT_LEVEL_PRIOR_RUNS} and, estimated, at most the
     * 8 runs that refit every term (a file may hold up to 100). Three runs
     * then move the level 3 / (3 + this) of the way their errors' median says (a median, so that one job the model
     * misses does not set the cluster's level).
     */
    public double levelPriorRuns() {
        return levelPriorRuns;
    }

    /**
     * A copy whose calibrations weigh its level as this many runs ({@link #levelPriorRuns()}).
     *
     * @throws IllegalArgumentException for a number of runs outside (0, 100]
     */
    public MegatronModel withLevelPriorRuns(double runs) {
        return new MegatronModel(c, interval, expertInterval, runs, revision, biases);
    }

    /**
     * The revision of the execution model's formulas its coefficients were fitted to: {@link #EXECUTION_REVISION} for
     * a model this library fitted, a file's own (1 where it names none); a calibration keeps the one it started from.
     */
    public int revision() {
        return revision;
    }

    /** A copy whose coefficients are taken as fitted to revision {@code value} of the formulas. */
    MegatronModel withRevision(int value) {
        return new MegatronModel(c, interval, expertInterval, levelPriorRuns, value, biases);
    }

    /**
     * The biases its fit left on its own runs of one architecture on one GPU, the larger first ({@link FittedBias}:
     * said by the predictions of such jobs, not corrected); none for a model not fitted on runs.
     */
    public List<FittedBias> biases() {
        return biases;
    }

    /** A copy with these biases of its fit ({@link #biases()}), kept the larger first. */
    public MegatronModel withBiases(List<FittedBias> value) {
        List<FittedBias> sorted = new java.util.ArrayList<>(value);
        sorted.forEach(b -> java.util.Objects.requireNonNull(b, "a bias of biases"));
        sorted.sort(FittedBias.ORDER);
        return new MegatronModel(c, interval, expertInterval, levelPriorRuns, revision, sorted);
    }

    /** What a prediction of a job says of the bias its fit left on such jobs, if any ({@link FittedBias#note}). */
    public Optional<String> biasNote(org.scaledl.workload.Workload w) {
        return FittedBias.noteFor(biases, w);
    }

    /**
     * The 90 % interval's log-ratio ends of its predictions ({@code [low ≤ 0, high ≥ 0]}), from the runs each
     * predicted by the model fitted without its group.
     */
    public double[] interval() {
        return interval.clone();
    }

    /** The interval of a job: of mixtures of experts ({@code experts}) or of the others. */
    public double[] interval(boolean experts) {
        return (experts ? expertInterval : interval).clone();
    }

    /**
     * The contractions' calibrated time (each at least its floor), ms: {@code max(c_class · shrunk(t_i), floor_i)}
     * with {@link #shrunk}.
     */
    double dense(MegatronTerms t) {
        double s = 0;
        for (int i = 0; i < t.contractions(); i++) {
            s += calibrated(t, i);
        }
        return s;
    }

    /**
     * The calibrated time of one contraction class, ms (as {@link #dense(MegatronTerms)} for its contractions only).
     *
     * @throws IllegalArgumentException for a term that is no contraction class
     */
    public double dense(MegatronTerms t, ExecutionTerm cls) {
        Checks.argument(cls.dense(), "%s is no contraction class", cls);
        double s = 0;
        for (int i = 0; i < t.contractions(); i++) {
            if (t.classOf(i) == cls) {
                s += calibrated(t, i);
            }
        }
        return s;
    }

    /** Contraction {@code i}'s calibrated time: {@code max(c_class · shrunk(t_i), floor_i)}, ms. */
    private double calibrated(MegatronTerms t, int i) {
        return Math.max(c[t.classOf(i).ordinal()] * t.shrunk(i), t.floor(i));
    }

    /**
     * A contraction's predicted time with its distance from the floor shrunk, {@code floor · (tree / floor)^}{@value
     * #EFFICIENCY_SHRINKAGE}, ms (the prediction itself where either is 0).
     */
    static double shrunk(double tree, double floor) {
        return tree > 0 && floor > 0 ? floor * Math.pow(tree / floor, EFFICIENCY_SHRINKAGE) : tree;
    }

    /** The GPU's calibrated time on the critical path, ms. */
    double gpu(MegatronTerms t) {
        double s = dense(t);
        for (ExecutionTerm k : TERMS) {
            if (k.fit() == ExecutionTerm.Fit.GPU && !k.dense()) {
                s += c[k.ordinal()] * t.value(k);
            }
        }
        return s;
    }

    /** The host's calibrated dispatch time (every {@link ExecutionTerm.Fit#HOST} term), ms. */
    public double host(MegatronTerms t) {
        double h = 0;
        for (ExecutionTerm k : TERMS) {
            if (k.fit() == ExecutionTerm.Fit.HOST) {
                h += c[k.ordinal()] * t.value(k);
            }
        }
        return h;
    }

    /**
     * The compute part, ms: the smooth max of the GPU's and the host's time, the softer {@link #SMOOTH_SYNCED} where
     * the job has layers with routed experts.
     */
    double compute(MegatronTerms t) {
        double g = gpu(t);
        double h = host(t);
        if (h == 0) {
            return g;
        }
        return smoothMax(g, h, t.value(expertLayerStep(t)) > 0 ? SMOOTH_SYNCED : SMOOTH);
    }

    /**
     * The term a job's host time per layer with routed experts is counted in: {@link ExecutionTerm#EXPERT_LAYER_STEP},
     * or its superchip refinement where the job runs on one.
     */
    static ExecutionTerm expertLayerStep(MegatronTerms t) {
        return t.value(ExecutionTerm.EXPERT_LAYER_STEP_C2C) > 0 ? ExecutionTerm.EXPERT_LAYER_STEP_C2C
                : ExecutionTerm.EXPERT_LAYER_STEP;
    }

    /** {@code (g^p + h^p)^(1/p)} of non-negative times, computed without overflow (0 where both are 0). */
    static double smoothMax(double g, double h, double p) {
        double m = Math.max(g, h);
        if (m == 0) {
            return 0;
        }
        return m * Math.pow(Math.pow(g / m, p) + Math.pow(h / m, p), 1 / p);
    }

    /**
     * How much longer than the GPUs' uncalibrated time ({@link MegatronTerms#gpuRaw}) the compute part lasts,
     * {@code compute / gpuRaw} (1 without either): the backward pass the data-parallel reduction hides behind lasts
     * as the model calibrates the GPUs' work and, where the host's dispatch bounds it, as the host paces it.
     */
    static double stretch(double compute, double gpuRaw) {
        return gpuRaw > 0 && compute > 0 ? compute / gpuRaw : 1;
    }

    /**
     * The data-parallel reduction's calibrated exposed time, ms: {@code c · dataComm(stretch / c)}, its coefficient
     * {@code c} scaling the collective's time and not the backward pass it hides behind (which lasts the
     * micro-batch's uncalibrated time times the stretch, {@link #stretch}): {@code max(c·tail, c·reduction −
     * ⅔·window)} where the reduction overlaps the last micro-batch's backward pass. The model is then homogeneous
     * where no contraction sits at its floor: every coefficient times {@code f} is every time times {@code f}.
     */
    public double dataComm(MegatronTerms t) {
        return dataComm(t, stretch(compute(t), t.gpuRaw()));
    }

    private double dataComm(MegatronTerms t, double stretch) {
        double c = this.c[ExecutionTerm.DATA_COMM.ordinal()];
        // (a coefficient so small that the window over it overflows leaves nothing of the collective's time)
        return c > 0 && Double.isFinite(stretch / c) ? c * t.dataComm(stretch / c) : 0;
    }

    /**
     * Whether the data-parallel traffic sets the iteration's time: its exposed part is more than
     * {@value #DATA_BOUND_EXPOSED} of the compute part, and a tenth more compute would show as less than a quarter
     * of itself in the step (the collectives, ZeRO-3's gathers above all, hide it), so the network's bandwidth, not
     * the compute, paces the job.
     */
    public boolean dataBound(MegatronTerms t) {
        double s = compute(t);
        if (!(s > 0)) {
            return false;
        }
        double exposed = dataComm(t, stretch(s, t.gpuRaw()));
        if (exposed <= DATA_BOUND_EXPOSED * s) {
            return false;
        }
        double more = 1.1 * s;
        return more + dataComm(t, stretch(more, t.gpuRaw())) - (s + exposed) < 0.25 * (more - s);
    }

    /** The least exposed data-parallel traffic, as a share of the compute part, that {@link #dataBound} considers. */
    static final double DATA_BOUND_EXPOSED = 0.05;

    /** The iteration's time, ms. */
    public double millis(MegatronTerms t) {
        double s = compute(t);
        double overlapped = dataComm(t, stretch(s, t.gpuRaw()));
        for (ExecutionTerm k : TERMS) {
            if (k.fit() == ExecutionTerm.Fit.ADDITIVE) {
                s += c[k.ordinal()] * t.value(k);
            }
        }
        return s + overlapped;
    }

    /** The saved form: the coefficients by name and the interval. */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        for (ExecutionTerm t : TERMS) {
            o.put(t.key(), c[t.ordinal()]);
        }
        o.putArray("interval_log_ratios").add(interval[0]).add(interval[1]);
        if (!Arrays.equals(expertInterval, interval)) {
            o.putArray("expert_interval_log_ratios").add(expertInterval[0]).add(expertInterval[1]);
        }
        if (levelPriorRuns != DEFAULT_LEVEL_PRIOR_RUNS) {
            o.put(LEVEL_PRIOR_KEY, levelPriorRuns);
        }
        o.put(REVISION_KEY, revision);
        if (!biases.isEmpty()) {
            biases.forEach(b -> o.withArray(BIASES_KEY).add(b.toJson()));
        }
        return o;
    }

    /**
     * Reads {@link #toJson()}, each coefficient in {@code [0, 10⁶]}; a coefficient the file lacks (a term added after
     * it was written) is the term's prior, or, for a refinement ({@link ExecutionTerm#parent()}), its parent's, and
     * is logged (a warning naming every term the file lacks); coefficients fitted to another revision of the formulas
     * ({@code execution_revision}, 1 where the file names none) are logged too.
     *
     * @throws InvalidInputException naming an out-of-range coefficient, interval or revision (a whole number from 1),
     *         or an unknown coefficient
     */
    public static MegatronModel fromJson(JsonNode o) {
        double[] c = priors();
        for (java.util.Iterator<String> it = o.fieldNames(); it.hasNext();) {
            String key = it.next();
            if (key.equals("interval_log_ratios") || key.equals("expert_interval_log_ratios")
                    || key.equals(LEVEL_PRIOR_KEY) || key.equals(REVISION_KEY) || key.equals(BIASES_KEY)) {
                continue;
            }
            ExecutionTerm t = ExecutionTerm.byKey(key).orElseThrow(() -> InvalidInputException.of("megatron."
                    + key + " is no execution term this library knows (a newer file?)"));
            c[t.ordinal()] = Fields.inRange(o.get(key), "megatron." + key, 0, 1e6);
        }
        java.util.List<String> lacking = new java.util.ArrayList<>();
        for (ExecutionTerm t : TERMS) {
            // a refinement the file lacks sustains its parent's coefficient, as a fit without its runs leaves it
            if (!o.has(t.key()) && t.parent().isPresent()) {
                c[t.ordinal()] = c[t.parent().get().ordinal()];
            }
            if (!o.has(t.key())) {
                lacking.add(t.key());
            }
        }
        if (!lacking.isEmpty()) {
            // (a file this library writes has every term: one without some is older, or was edited)
            LOG.warn("the model's execution terms lack {} (a file written before {} existed, or edited): {} "
                    + "the prior, or a refinement its parent's coefficient; refit it (fit --gpu, or fit --calibrate on "
                    + "8 runs or more: fewer move the level alone) to learn {}",
                    String.join(", ", lacking), lacking.size() == 1 ? "it" : "they", lacking.size() == 1 ? "it is"
                            : "each is", lacking.size() == 1 ? "it" : "them");
        }
        double given = o.has(REVISION_KEY) ? Fields.inRange(o.get(REVISION_KEY), "megatron." + REVISION_KEY, 1, 1e6)
                : 1;
        if (given != Math.rint(given)) {
            throw InvalidInputException.of("megatron." + REVISION_KEY + " must be a whole number: " + given);
        }
        int revision = (int) given;
        if (revision != EXECUTION_REVISION) {
            boolean older = revision < EXECUTION_REVISION;
            LOG.warn("the model's execution coefficients were fitted to the formulas of execution revision {}, this "
                    + "library's are revision {} ({}): {}", revision, EXECUTION_REVISION, older
                            ? (revision < 2 ? "since revision 2 a pipeline's sends are timed hop by hop, over the "
                            + "network where neighbouring stages sit on different nodes, and overlapped with the next "
                            + "chunk's pass under interleaving, and tensor and context groups cross a node's edge only "
                            + "where the job's own do; " : "") + (revision < 3 ? "since revision 3 the experts' "
                            + "all-to-all moves 16-bit hidden states under FP8 and FP4 recipes too, a mixture of "
                            + "experts without a shared expert runs no tensor-parallel collective with sequence "
                            + "parallelism, and the embedding's gradient all-reduce shares its node's network; " : "")
                            + "since revision 4 the all-to-all dispatcher's own passes over the routed tokens are "
                            + "timed (sorted by local expert and back, padded for FP8 and FP4 products) and DeepEP "
                            + "and HybridEP send a token once per rank holding its experts"
                            : "a newer library's", older ? "refit it (fit "
                            + "--gpu), or calibrate the bundled model on the same runs instead (fit --calibrate gpu "
                            + "--runs ...; a calibration keeps the revision it starts from), for coefficients that "
                            + "suit them" : "predict it with the library that wrote it, or a newer one");
        }
        double[] iv = readInterval(o, "interval_log_ratios");
        double level = o.has(LEVEL_PRIOR_KEY)
                ? Fields.inRange(o.get(LEVEL_PRIOR_KEY), "megatron." + LEVEL_PRIOR_KEY, 1e-3, MAX_LEVEL_PRIOR_RUNS)
                : DEFAULT_LEVEL_PRIOR_RUNS;
        List<FittedBias> biases = new java.util.ArrayList<>();
        if (o.has(BIASES_KEY)) {
            JsonNode b = o.get(BIASES_KEY);
            if (!b.isArray() || b.size() > MAX_BIASES) {
                throw InvalidInputException.of("megatron." + BIASES_KEY + " must be a list of at most " + MAX_BIASES
                        + " biases");
            }
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (int i = 0; i < b.size(); i++) {
                FittedBias f = FittedBias.fromJson(b.get(i), "megatron." + BIASES_KEY + "[" + i + "]");
                // (a fit keeps one bias an architecture and GPU: a second would be said, or not, by its order)
                if (!seen.add(f.architecture() + "\n" + org.scaledl.workload.Device.key(f.device()))) {
                    throw InvalidInputException.of("megatron." + BIASES_KEY + "[" + i + "]: a second bias of "
                            + InvalidInputException.printable(f.label(), 60) + " on "
                            + InvalidInputException.printable(f.device(), 60) + " (a fit keeps one)");
                }
                biases.add(f);
            }
        }
        return new MegatronModel(c, iv, o.has("expert_interval_log_ratios")
                ? readInterval(o, "expert_interval_log_ratios") : iv.clone(), level, revision, List.of())
                .withBiases(biases);
    }

    private static double[] readInterval(JsonNode o, String key) {
        JsonNode iv = o.path(key);
        return new double[] {Fields.inRange(iv.get(0), "megatron." + key + "[0]", -10, 0),
            Fields.inRange(iv.get(1), "megatron." + key + "[1]", 0, 10)};
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MegatronModel m && Arrays.equals(m.c, c) && Arrays.equals(m.interval, interval)
                && Arrays.equals(m.expertInterval, expertInterval) && m.levelPriorRuns == levelPriorRuns
                && m.revision == revision && m.biases.equals(biases);
    }

    @Override
    public int hashCode() {
        return (Arrays.hashCode(c) * 31 + Arrays.hashCode(interval)) * 31 + Double.hashCode(levelPriorRuns);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("MegatronModel[");
        for (ExecutionTerm t : TERMS) {
            b.append(t.ordinal() == 0 ? "" : ", ").append(t.key()).append('=').append(String.format(Locale.ROOT,
                    "%.4g", c[t.ordinal()]));
        }
        return b.append(", level_prior_runs=").append(String.format(Locale.ROOT, "%.4g", levelPriorRuns))
                .append(", execution_revision=").append(revision).append(biases.isEmpty() ? ""
                        : ", fitted_biases=" + biases.size()).append(']').toString();
    }
}
