package org.scaledl.model.exec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.cost.LevenbergMarquardt;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Workload;

/**
 * Fits the Megatron execution model ({@link MegatronModel}) from measured training iterations, ScaleDL's way: each
 * run's uncalibrated terms ({@link MegatronTerms}: contractions and other layers as the device layer model predicts
 * them, collectives, layer executions, hand-offs, the optimizer) against its measured time. The compute part's
 * coefficients ({@link ExecutionTerm.Fit#GPU} and {@link ExecutionTerm.Fit#HOST} terms), and the data-parallel
 * reduction's ({@link ExecutionTerm.Fit#OVERLAP}: what of it hides depends on them), minimise the weighted Huber
 * loss of the log-ratio of predicted to measured time (its square within {@value #ROBUST}, about 10 %, its size
 * beyond: a run far off the rest, a software path of its own or a setting described wrongly, pulls as its error, not
 * its error's square), by Levenberg–Marquardt on their logarithms; at each of its steps the additive ones come from
 * non-negative least squares on the runs' relative errors, solved once and again with each run's Huber weight at
 * the first solution (one step of iteratively reweighted least squares: an approximation of the same loss, not its
 * minimum). The families' offsets below keep their quadratic shrinkage, so a family of few runs far off has its
 * offset shrunk more than its runs' spread alone would. The fit pulls weakly ({@value #PRIOR}) the terms that physics
 * fixes ({@link ExecutionTerm#pulled()}) toward the centre (their priors, or the model being calibrated), and a
 * refinement ({@link ExecutionTerm#parent()}) in its ratio to its parent toward the centre's ratio: the data then
 * decide what they can tell apart, and the physics the rest (a term no run exercises stays where it was). A
 * calibration ({@link #calibrate}) pulls the free terms toward the centre too, relative to their size, so a few runs
 * move the fixed and host costs only as far as they show; below {@link #TERM_RUNS} runs it moves the centre's level
 * only, and from that many on it keeps the terms' refit only where the refit predicts the runs, each held out in
 * turn, better than the level alone does.
 *
 * <p>Runs of one model family share what no term describes (a kernel its recipe runs slowly, a software path of its
 * own), so a family of many runs, all off by one factor, would otherwise pull the shared coefficients toward itself
 * and away from every other family. Where the runs name at least {@value #MIN_FAMILIES} families ({@code family}
 * tag) and the plain fit leaves the families' mean errors further apart than their runs' scatter explains, the fit
 * is redone with a multiplicative offset per family, fitted with the coefficients and shrunk toward 1 as a one-way
 * random-effects model's levels are: by {@code σ²/τ²} runs' worth, the plain fit's within-family variance of the log
 * errors over the variance of the families' means beyond it ({@link #varianceComponents}). The estimate is a
 * conservative one: where the plain fit's coefficients absorbed a family's level (a family alone in exercising a
 * term), its spread is understated and its offset shrunk the more. The offsets are not kept: the model predicts a
 * new family at the families' shrunk common level.
 *
 * <p>Its errors are each run's prediction by the model fitted without its group (the {@code groupTag}'s values;
 * the fit's own errors when there are fewer than three groups). The model's 90 % intervals are those errors' 5–95 %
 * quantiles ({@link org.scaledl.model.cost.Quantiles#weighted}): one for mixtures of experts and one for the other
 * jobs where the fit has {@value #MIN_EXPERT_RUNS} runs of each (on published cluster runs with each family held out,
 * the experts' errors were twice as wide), else one for all. Where the groups are the families, each family's runs
 * weigh one together within their kind (its {@link #INTERVAL_GROUP_TAG} where a run names one), as the interval is
 * for a job of a family the model has not seen, and a kind needs {@value #MIN_FAMILIES} families of its own; else
 * (other groups, a run without a family) each run weighs as in the fit. A calibration's interval of a kind is never
 * narrower than that of the model it started from unless its runs of that kind are {@value #MIN_EXPERT_RUNS} or
 * more, of {@value #MIN_FAMILIES} or more models: fewer tell the scatter of their own jobs, not of the other models it
 * predicts.
 *
 * @param model          the fitted model
 * @param logErrors      {@code log(predicted / measured)} per run, out of group where cross-validated
 * @param crossValidated whether the errors are out of group
 */
public record MegatronFit(MegatronModel model, List<Double> logErrors, boolean crossValidated) {
    /** The weight of the pull toward the physical scales. */
    static final double PRIOR = 0.3;
    /**
     * The log error (about 10 %) beyond which a run's error weighs in the fit as its size, not its square (Huber's
     * loss): errors of the noise floor and the model's usual scatter are fitted by least squares.
     */
    public static final double ROBUST = 0.1;
    /** The inner problem's solves per step: the first unweighted, the next with the Huber weights at the first. */
    private static final int INNER_PASSES = 2;
    /** The fewest families whose offsets a fit separates from the shared coefficients. */
    static final int MIN_FAMILIES = 3;
    /** The workload tag naming a run's model family. */
    static final String FAMILY_TAG = "family";
    /**
     * The workload tag grouping runs for the interval's weights where their families are finer than the families a
     * new job comes from (vTrain's GPT sizes, one group: the sizes' held-out errors are not a new family's); absent,
     * a run's family is its group.
     */
    public static final String INTERVAL_GROUP_TAG = "interval_group";
    private static final ExecutionTerm[] LINEAR = ExecutionTerm.of(ExecutionTerm.Fit.ADDITIVE)
            .toArray(new ExecutionTerm[0]);
    private static final ExecutionTerm[] NONLINEAR = nonlinear();

    private static ExecutionTerm[] nonlinear() {
        List<ExecutionTerm> out = new ArrayList<>();
        for (ExecutionTerm t : ExecutionTerm.values()) {
            if (t.fit() != ExecutionTerm.Fit.ADDITIVE) {
                out.add(t);
            }
        }
        return out.toArray(new ExecutionTerm[0]);
    }

    /**
     * A run's terms, its measured time, its weight in the fit, its model family ("" for none) and its job
     * ({@link Workload#identity()}; "" where not known: each such run a job of its own).
     */
    record Run(MegatronTerms terms, double millis, double weight, String family, String job) {
        Run(MegatronTerms terms, double millis, double weight) {
            this(terms, millis, weight, "", "");
        }
    }

    /** The distinct jobs among {@code rows} that weigh in the fit (a run of unknown job counts as one of its own). */
    private static long jobs(List<Run> data, int[] rows) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i : rows) {
            Run r = data.get(i);
            if (r.weight() > 0) {
                seen.add(jobKey(data, i));
            }
        }
        return seen.size();
    }

    /** Run {@code i}'s job, or for a run of unknown job one of its own. */
    private static String jobKey(List<Run> data, int i) {
        return data.get(i).job().isEmpty() ? "#" + i : data.get(i).job();
    }

    /** A run's terms (what a fit needs of the stage). */
    public interface TermSource {
        /** The uncalibrated terms of a workload's iteration. */
        MegatronTerms terms(Workload w);
    }

    /** Fits from the priors, every run weighing one (or its {@link #WEIGHT_TAG}). */
    public static MegatronFit fit(TermSource stage, List<org.scaledl.workload.Sample> runs, String groupTag) {
        return fit(stage, runs, groupTag, MegatronModel.uncalibrated(), false);
    }

    /**
     * The fit with the physical scales pulled toward {@code centre}'s instead of the priors, and with
     * {@code calibrate} the free terms too: a calibration of a fitted model on a few runs of the user's stays near it
     * where they say little.
     */
    public static MegatronFit fit(TermSource stage, List<org.scaledl.workload.Sample> runs, String groupTag,
            MegatronModel centre, boolean calibrate) {
        List<Run> data = new ArrayList<>();
        // a calibration's runs of one job (measured again, every iteration logged as a run) weigh together what one
        // run does: their repeats say the job's level, not the model's scatter over jobs (twenty copies of one job
        // moved every other job's prediction as twenty jobs would); runs given their own weight (fit_weight: a
        // table's repeated publications share one already) keep it
        // each run's job, once (its identity holds every setting: computed once a run)
        List<String> jobOf = runs.stream().map(s -> s.workload().identity()).toList();
        java.util.Map<String, Integer> repeats = new java.util.HashMap<>();
        for (int i = 0; calibrate && i < runs.size(); i++) {
            if (runs.get(i).workload().tag(WEIGHT_TAG).isEmpty()) {
                repeats.merge(jobOf.get(i), 1, Integer::sum);
            }
        }
        for (int i = 0; i < runs.size(); i++) {
            org.scaledl.workload.Sample s = runs.get(i);
            int shared = calibrate && s.workload().tag(WEIGHT_TAG).isEmpty() ? repeats.get(jobOf.get(i)) : 1;
            Run run = new Run(stage.terms(s.workload()), s.millis(), weight(s) / shared,
                    s.workload().tag(FAMILY_TAG).orElse(""), jobOf.get(i));
            data.add(run);
            if (!calibrate && run.weight() > 0) {
                refuseFarOff(s, centre.millis(run.terms()));
            }
        }
        List<Folds.Fold> folds = Folds.leaveOneGroupOut(runs, Folds.byTag(groupTag));
        List<Double> errors = new ArrayList<>();
        // a job measured again under another id is one job: its repeats say its level, not the terms or the error
        // of other jobs (eight runs of one job refitted the terms and shrank the interval to nothing)
        long jobs = jobs(data, all(data.size()));
        boolean cv = folds.size() >= (calibrate ? MIN_CALIBRATION_GROUPS : 3)
                && (!calibrate || jobs >= MIN_CALIBRATION_GROUPS);
        double[] out = new double[data.size()];
        boolean levelOnly = false;
        double[][] heldOut = null;
        if (calibrate && jobs >= TERM_RUNS) {
            // a calibration of runs enough to refit the terms keeps the refit only where it predicts them, each held
            // out, better than the level alone does (job by job, whatever groups the interval's folds take)
            // (a job's repeats held out together: its twin left in would predict it)
            List<String> each = new ArrayList<>();
            for (int i = 0; i < data.size(); i++) {
                each.add(jobKey(data, i));
            }
            List<Folds.Fold> runByRun = Folds.leaveOneGroupOut(each);
            heldOut = levelAndTermsHeldOut(data, runByRun, centre);
            // (a tie, or an error that is not a number, keeps the simpler model)
            levelOnly = !(weightedMeanAbs(data, heldOut[1]) < weightedMeanAbs(data, heldOut[0]));
        }
        // (the terms refitted on every run only where they were chosen)
        MegatronModel model = levelOnly ? level(data, all(data.size()), centre)
                : fitOrCalibrate(data, all(data.size()), centre, calibrate);
        if (calibrate) {
            // its coefficients start from the centre's: fitted to the formulas the centre's were
            model = model.withRevision(centre.revision());
        }
        if (cv && heldOut != null && folds.size() == data.size()) {
            // the interval's folds are the runs themselves: their held-out errors are those just computed
            out = heldOut[levelOnly ? 0 : 1];
        } else if (cv) {
            for (Folds.Fold f : folds) {
                int[] train = f.train().stream().mapToInt(Integer::intValue).toArray();
                MegatronModel m = levelOnly ? level(data, train, centre) : fitOrCalibrate(data, train, centre,
                        calibrate);
                for (int i : f.test()) {
                    out[i] = Math.log(m.millis(data.get(i).terms()) / data.get(i).millis());
                }
            }
        } else {
            for (int i = 0; i < out.length; i++) {
                out[i] = Math.log(model.millis(data.get(i).terms()) / data.get(i).millis());
            }
        }
        for (double e : out) {
            errors.add(e);
        }
        double[] w = new double[data.size()];
        boolean[] experts = new boolean[data.size()];
        int expertRuns = 0;
        for (int i = 0; i < w.length; i++) {
            w[i] = data.get(i).weight();
            experts[i] = runs.get(i).workload().graph().transformer().map(TransformerShape::mixtureOfExperts)
                    .orElse(false);
            expertRuns += experts[i] ? 1 : 0;
        }
        // the interval is for a job of a family the model has not seen: where the errors are each family's held out
        // (a fit's, or a calibration's on runs of three families or more), each family's errors weigh one together
        // within its kind (a family of many runs does not set the ends alone); a run without a family, and errors
        // held out by other groups (a calibration's runs one by one), weigh as in the fit
        boolean byFamily = cv && groupTag.equals(FAMILY_TAG);
        int[] groupsOfKind = new int[2];
        if (byFamily) {
            java.util.Map<String, Double> total = new java.util.HashMap<>();
            String[] key = new String[w.length];
            for (int i = 0; i < w.length; i++) {
                Workload wl = runs.get(i).workload();
                Optional<String> group = wl.tag(INTERVAL_GROUP_TAG).or(() -> wl.tag(FAMILY_TAG))
                        .filter(x -> !x.isEmpty());
                if (group.isPresent()) {
                    key[i] = (experts[i] ? "experts:" : "other:") + group.get();
                    if (!total.containsKey(key[i])) {
                        groupsOfKind[experts[i] ? 1 : 0]++;
                    }
                    total.merge(key[i], w[i], Double::sum);
                } else {
                    groupsOfKind[experts[i] ? 1 : 0]++;
                }
            }
            for (int i = 0; i < w.length; i++) {
                if (key[i] != null) {
                    double t = total.get(key[i]);
                    w[i] = t > 0 ? w[i] / t : 0;
                }
            }
        }
        double[] all = org.scaledl.model.cost.Quantiles.interval(out, w);
        boolean otherEnough = data.size() - expertRuns >= MIN_EXPERT_RUNS
                && (!byFamily || groupsOfKind[0] >= MIN_FAMILIES);
        boolean expertEnough = expertRuns >= MIN_EXPERT_RUNS && (!byFamily || groupsOfKind[1] >= MIN_FAMILIES);
        double[] interval = kindInterval(out, w, experts, false, otherEnough, expertRuns, all, centre, calibrate);
        double[] expertInterval = kindInterval(out, w, experts, true, expertEnough, data.size() - expertRuns, all,
                centre, calibrate);
        double[] prior = centre.interval();
        if (calibrate && !cv) {
            // too few runs to measure the calibrated model's own error: the model it started from keeps its intervals
            // (none where it had none: three runs' own errors, in sample, made a "90 %" interval of -1..+5 % that
            // missed two of them)
            interval = prior;
            expertInterval = centre.interval(true);
        } else if (calibrate) {
            // the runs' held-out errors tell the scatter of the jobs they are (eight runs of one model, 4 % apart,
            // made x0.94..x1.09 of every job's interval; six of two models, one-sided x1.00..x1.08); the model
            // predicts other models too, whose scatter the interval it started from tells: never narrower than that,
            // for each kind of job, but where the runs of that kind are as many and of as many models as a fit's
            // interval of a kind needs
            if (!intervalOfItsOwn(runs, experts, false)) {
                interval = widest(interval, prior);
            }
            if (!intervalOfItsOwn(runs, experts, true)) {
                expertInterval = widest(expertInterval, centre.interval(true));
            }
        }
        // estimated where the runs' held-out errors span enough clusters, else the centre's (the default from priors)
        double levelRuns = (cv ? levelPriorRuns(runs, out) : Optional.<Double>empty())
                .orElse(centre.levelPriorRuns());
        // the biases the fitted coefficients leave on the runs of one model on one GPU, in sample (a calibration's
        // are its runs' own: the centre's were of the coefficients it replaces)
        double[] inSample = new double[data.size()];
        double[] fitWeights = new double[data.size()];
        for (int i = 0; i < inSample.length; i++) {
            inSample[i] = Math.log(model.millis(data.get(i).terms()) / data.get(i).millis());
            fitWeights[i] = data.get(i).weight();
        }
        List<FittedBias> biases = FittedBias.of(runs.stream().map(org.scaledl.workload.Sample::workload).toList(),
                inSample, fitWeights, jobOf, data.stream().map(Run::family).toList());
        return new MegatronFit(model.withInterval(interval[0], interval[1])
                .withExpertInterval(expertInterval[0], expertInterval[1]).withLevelPriorRuns(levelRuns)
                .withBiases(biases), errors, cv);
    }

    /** The interval spanning both ({@code a} where {@code b} is no interval: {@code [0, 0]}). */
    private static double[] widest(double[] a, double[] b) {
        return b[0] == 0 && b[1] == 0 ? a : new double[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])};
    }

    /**
     * Whether a calibration's weighted runs of one kind ({@code experts[i]} the kind of {@code runs.get(i)}: mixtures
     * of experts, or the other jobs) tell that kind's interval on their own: {@value #MIN_EXPERT_RUNS} or more, of
     * {@value #MIN_FAMILIES} or more models (their families where tagged, else their architectures whatever the
     * sequence: Llama 3 8B at 4,096 and 8,192 tokens is one model).
     */
    private static boolean intervalOfItsOwn(List<org.scaledl.workload.Sample> runs, boolean[] experts,
            boolean which) {
        List<org.scaledl.workload.Sample> kind = java.util.stream.IntStream.range(0, runs.size())
                .filter(i -> experts[i] == which && weight(runs.get(i)) > 0).mapToObj(runs::get).toList();
        long models = kind.stream().map(s -> s.workload().tag(FAMILY_TAG).filter(f -> !f.isEmpty())
                .orElseGet(() -> s.workload().graph().transformer().map(FittedBias::architecture)
                        .orElse(s.workload().graph().name()))).distinct().count();
        return kind.size() >= MIN_EXPERT_RUNS && models >= MIN_FAMILIES;
    }

    /**
     * Refuses a run that a fit would take as it is though it measures more than
     * {@link org.scaledl.model.cost.LayerStage#MAX_MEASURED_RATIO} times faster than what {@code centre} says of it
     * (fitting anew, the physics at its priors, the host's dispatch uncounted): faster than its work can run, a time in
     * seconds for milliseconds, or another job. (Slower is no proof: a small job waits for its host, which the priors
     * leave at nothing.) A calibration refuses such a run both ways.
     */
    private static void refuseFarOff(org.scaledl.workload.Sample s, double predicted) {
        double ratio = s.millis() / predicted;
        double most = org.scaledl.model.cost.LayerStage.MAX_MEASURED_RATIO;
        // (a ratio that underflows to 0, a subnormal time, is as far off)
        if (ratio >= 0 && ratio < 1 / most) {
            Workload w = s.workload();
            String where = w.tag(org.scaledl.io.DatasetReader.SOURCE_TAG).orElse(w.toString());
            throw org.scaledl.InvalidInputException.of(String.format(java.util.Locale.ROOT, "%s: the run measures "
                    + "%s ms, %.0f times faster than the execution model's physics says its work can run: it is "
                    + "another job, or its time is not in milliseconds (at most %.0f times faster is fitted on)",
                    org.scaledl.InvalidInputException.printable(where, 200),
                    String.format(java.util.Locale.ROOT, "%.4g", s.millis()), 1 / ratio, most));
        }
    }

    /** The fewest clusters (system and release) whose held-out errors estimate {@link #levelPriorRuns}. */
    static final int MIN_LEVEL_CLUSTERS = 3;

    /**
     * The weight, in runs, of a model's level against a new cluster's first runs (its
     * {@link MegatronModel#levelPriorRuns()}): from the held-out log errors of the runs that name their system and
     * release, grouped by both (a cluster and its software; a job published twice in one cluster counted once, at
     * its mean error), the runs' variance around their cluster's mean over the variance of the clusters' means beyond
     * what that scatter explains (the method of moments of a one-way random-effects model; an empirical-Bayes mean
     * shrinks by that ratio). The errors are those of the fit's own folds (by model family, or model), in which a
     * cluster's other jobs stay fitted: its level is then partly learned, so the clusters' spread is understated and
     * the prior, if anything, too heavy (a calibration then moves too little rather than chasing one run's scatter). Empty with fewer than
     * {@value #MIN_LEVEL_CLUSTERS} clusters of two runs or more; at most {@link #MAX_ESTIMATED_LEVEL_PRIOR_RUNS} runs,
     * which is also the prior where the clusters' means differ no more than their runs' scatter explains.
     */
    static Optional<Double> levelPriorRuns(List<org.scaledl.workload.Sample> runs, double[] heldOutLogErrors) {
        // per cluster, per job: a job published twice in one cluster (two pages of one release) is one run
        java.util.Map<String, java.util.Map<String, List<Double>>> jobs = new java.util.TreeMap<>();
        for (int i = 0; i < runs.size(); i++) {
            Workload w = runs.get(i).workload();
            if (w.tag("system").isPresent() && w.tag("release").isPresent() && Double.isFinite(heldOutLogErrors[i])) {
                jobs.computeIfAbsent(cluster(w), k -> new java.util.TreeMap<>())
                        .computeIfAbsent(w.toString(), k -> new ArrayList<>()).add(heldOutLogErrors[i]);
            }
        }
        java.util.Map<String, List<Double>> clusters = new java.util.TreeMap<>();
        jobs.forEach((cluster, byJob) -> clusters.put(cluster, byJob.values().stream()
                .map(v -> v.stream().mapToDouble(Double::doubleValue).average().orElseThrow()).toList()));
        clusters.values().removeIf(v -> v.size() < 2);
        if (clusters.size() < MIN_LEVEL_CLUSTERS) {
            return Optional.empty();
        }
        List<double[]> values = new ArrayList<>();
        List<double[]> weights = new ArrayList<>();
        for (List<Double> v : clusters.values()) {
            values.add(v.stream().mapToDouble(Double::doubleValue).toArray());
            double[] ones = new double[v.size()];
            Arrays.fill(ones, 1);
            weights.add(ones);
        }
        double[] components = varianceComponents(values, weights);
        double within = components[0];
        double levels = components[1];
        double max = MAX_ESTIMATED_LEVEL_PRIOR_RUNS;
        return Optional.of(levels <= within / max ? max
                : Math.max(MegatronModel.DEFAULT_LEVEL_PRIOR_RUNS, Math.min(max, within / levels)));
    }

    /**
     * A run's cluster: its system and software release, its {@code system} and {@code release} tags
     * ({@code "DGX-H100 25.09"}; {@code "?"} for a missing tag). The level prior groups the runs that name both; the
     * cluster evaluation holds each out and calibrates on a few of its runs.
     */
    public static String cluster(Workload w) {
        return w.tag("system").orElse("?") + " " + w.tag("release").orElse("?");
    }

    /**
     * The fewest runs of a kind (mixtures of experts, or the other jobs) whose errors give that kind its own interval.
     */
    static final int MIN_EXPERT_RUNS = 20;

    /**
     * The interval of one kind of job: from its own runs' errors where there are {@code enough} of them (or where every
     * run is of it); else, in a calibration, the interval the model started from for that kind; else every run's.
     */
    private static double[] kindInterval(double[] errors, double[] w, boolean[] experts, boolean kind, boolean enough,
            int others, double[] all, MegatronModel centre, boolean calibrate) {
        if (others == 0) {
            return all;
        }
        if (enough) {
            double[] wk = new double[w.length];
            for (int i = 0; i < wk.length; i++) {
                wk[i] = experts[i] == kind ? w[i] : 0;
            }
            return org.scaledl.model.cost.Quantiles.interval(errors, wk);
        }
        double[] before = centre.interval(kind);
        return calibrate && (before[0] < 0 || before[1] > 0) ? before : all;
    }

    /**
     * Runs below which a calibration moves only the level of the model (one factor over every coefficient: the
     * cluster's overall efficiency), as one to a few runs can tell nothing more without trading one term against
     * another; from this many on, the terms are refitted around the new level too, where that predicts the runs, each
     * held out, better than the level alone does.
     */
    public static final int TERM_RUNS = 8;

    /**
     * The most runs an estimated level prior weighs ({@link #levelPriorRuns}): as many as refit every term
     * ({@link #TERM_RUNS}). From the few clusters of a fit, levels that differ no more than their runs' scatter
     * explains are no proof that a new cluster's level is known: a prior of 100 runs (the most a file may hold) left a
     * system held out whole (H100) uncalibrated by its first runs.
     */
    static final double MAX_ESTIMATED_LEVEL_PRIOR_RUNS = TERM_RUNS;


    /**
     * A calibration's runs each predicted held out (group by group) by the level alone ({@code [0]}) and by the terms
     * refitted around it ({@code [1]}), as log errors: which of the two generalises across the runs (the extremes a
     * D-optimal plan picks, where the model errs most, may leave no refit of the terms that does).
     */
    private static double[][] levelAndTermsHeldOut(List<Run> data, List<Folds.Fold> folds, MegatronModel centre) {
        double[][] out = new double[2][data.size()];
        for (Folds.Fold f : folds) {
            int[] train = f.train().stream().mapToInt(Integer::intValue).toArray();
            MegatronModel l = level(data, train, centre);
            MegatronModel t = fit(data, train, l, true);
            for (int i : f.test()) {
                Run r = data.get(i);
                out[0][i] = Math.log(l.millis(r.terms()) / r.millis());
                out[1][i] = Math.log(t.millis(r.terms()) / r.millis());
            }
        }
        return out;
    }

    /** The runs' weighted mean absolute log error. */
    private static double weightedMeanAbs(List<Run> data, double[] logErrors) {
        double s = 0;
        double w = 0;
        for (int i = 0; i < logErrors.length; i++) {
            s += data.get(i).weight() * Math.abs(logErrors[i]);
            w += data.get(i).weight();
        }
        return w > 0 ? s / w : 0;
    }

    private static MegatronModel fitOrCalibrate(List<Run> data, int[] rows, MegatronModel centre, boolean calibrate) {
        if (!calibrate) {
            return fit(data, rows, centre, false);
        }
        MegatronModel level = level(data, rows, centre);
        // (a job measured again is one job: the terms are refitted from TERM_RUNS jobs, as the calibration decides)
        return jobs(data, rows) < TERM_RUNS ? level : fit(data, rows, level, true);
    }

    /**
     * A calibration's level: the runs' weighted median log ratio of measured to predicted time, shrunk toward the
     * centre's as the centre's level prior says, over every coefficient.
     */
    private static MegatronModel level(List<Run> data, int[] rows, MegatronModel centre) {
        // the level: the runs' weighted median log ratio of measured to predicted (one job the model misses, of a
        // family it has not seen, does not set a cluster's level), shrunk toward the centre's as that many runs are
        double[] logRatios = new double[rows.length];
        double[] weights = new double[rows.length];
        double runs = 0;
        for (int k = 0; k < rows.length; k++) {
            Run r = data.get(rows[k]);
            logRatios[k] = Math.log(r.millis() / Math.max(1e-300, centre.millis(r.terms())));
            weights[k] = r.weight();
            runs += r.weight();
        }
        // (of two runs, their weighted mean: a median of two is the midpoint whatever their weights)
        long weighted = Arrays.stream(weights).filter(x -> x > 0).count();
        double median = weighted == 2 ? weightedMean(logRatios, weights)
                : org.scaledl.model.cost.Quantiles.weighted(logRatios, weights, 0.5);
        double factor = Math.exp(runs * median / (runs + centre.levelPriorRuns()));
        java.util.Map<ExecutionTerm, Double> c = new java.util.EnumMap<>(ExecutionTerm.class);
        centre.coefficients().forEach((k, v) -> c.put(k, v * factor));
        double[] iv = centre.interval();
        double[] ie = centre.interval(true);
        return MegatronModel.of(c).withInterval(iv[0], iv[1]).withExpertInterval(ie[0], ie[1])
                .withLevelPriorRuns(centre.levelPriorRuns());
    }

    /** The weighted mean of {@code values} (0 for no weight). */
    private static double weightedMean(double[] values, double[] weights) {
        double sum = 0;
        double total = 0;
        for (int i = 0; i < values.length; i++) {
            sum += weights[i] * values[i];
            total += weights[i];
        }
        return total > 0 ? sum / total : 0;
    }

    /**
     * The fewest groups (runs, or families) a calibration's errors are cross-validated over; with fewer, the interval
     * stays the calibrated model's.
     */
    static final int MIN_CALIBRATION_GROUPS = 5;

    /**
     * A sample's weight in the fit: its {@link #WEIGHT_TAG} tag where given (repeated publications share one), a
     * finite number of at least 0.
     *
     * @throws org.scaledl.InvalidInputException naming the tag, its value and the run (its source, else its job) for
     *         a tag that is no such number
     */
    public static double weight(org.scaledl.workload.Sample s) {
        Optional<String> tag = s.workload().tag(WEIGHT_TAG);
        if (tag.isEmpty()) {
            return 1.0;
        }
        double w;
        try {
            w = Double.parseDouble(tag.get().strip());
        } catch (NumberFormatException e) {
            w = Double.NaN;
        }
        if (!(w >= 0 && w <= org.scaledl.io.JobRuns.MAX_FIT_WEIGHT)) {
            throw org.scaledl.InvalidInputException.of("the " + WEIGHT_TAG + " tag of the run "
                    + s.workload().tag(org.scaledl.io.DatasetReader.SOURCE_TAG).orElse(s.workload().toString())
                    + " is '" + org.scaledl.InvalidInputException.printable(tag.get(), 40) + "': a run's weight in "
                    + "the fit is a number from 0 to " + (long) org.scaledl.io.JobRuns.MAX_FIT_WEIGHT
                    + " (a runs table's fit_weight cell's range)");
        }
        return w;
    }

    /** The workload tag holding a run's weight in the fit (default 1): repeated publications of a job share one. */
    public static final String WEIGHT_TAG = "fit_weight";

    private static int[] all(int n) {
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        return all;
    }

    /** The coefficients for a subset of the runs, from the priors (every run weighing one). */
    public static MegatronModel fit(List<MegatronTerms> terms, double[] y, int[] rows) {
        List<Run> data = new ArrayList<>();
        for (int i = 0; i < y.length; i++) {
            data.add(new Run(terms.get(i), y[i], 1));
        }
        return fit(data, rows, MegatronModel.uncalibrated(), false);
    }

    /**
     * The coefficients for a subset of the runs: the compute part's by Levenberg–Marquardt on their logarithms (the
     * runs' weighted Huber loss of their log errors), and for each of its steps the additive ones by non-negative least
     * squares on the runs' relative errors, reweighted once by their Huber weights (variable projection), with the
     * pulled terms (with {@code calibrate}, every term) pulled toward {@code centre}'s.
     */
    static MegatronModel fit(List<Run> data, int[] rows, MegatronModel centre, boolean calibrate) {
        double[] start = new double[NONLINEAR.length];
        for (int k = 0; k < start.length; k++) {
            double c = centre.coefficient(NONLINEAR[k]);
            start[k] = Math.log(c > 0 ? c : 1.0);
        }
        double[] phi = LevenbergMarquardt.minimise(x -> residuals(data, rows, x, null, centre, calibrate), start,
                200);
        MegatronModel[] out = new MegatronModel[1];
        residuals(data, rows, phi, out, centre, calibrate);
        int[] groupOf = new int[rows.length];
        int groups = families(data, rows, groupOf);
        if (groups >= MIN_FAMILIES) {
            double lambda = familyShrinkage(data, rows, out[0], groupOf, groups);
            if (Double.isFinite(lambda)) {
                // the coefficients and the families' offsets together, from the plain fit's coefficients
                double[] both = LevenbergMarquardt.minimise(x -> familyResiduals(data, rows, x, null, centre,
                        calibrate, groupOf, groups, lambda), Arrays.copyOf(phi, phi.length + groups), 200);
                familyResiduals(data, rows, both, out, centre, calibrate, groupOf, groups, lambda);
            }
        }
        // a term no fitted run exercises (the host's expert steps in a fit of dense jobs) says nothing about its
        // coefficient: it keeps the centre's, not the fitter's starting point (a refinement follows its parent,
        // below)
        MegatronModel model = out[0];
        for (ExecutionTerm t : NONLINEAR) {
            if (t.parent().isEmpty() && !exercised(data, rows, t)) {
                model = model.with(t, centre.coefficient(t));
            }
        }
        for (ExecutionTerm t : NONLINEAR) {
            // a refinement which no run exercises (the superchips' host time in a fit without them) follows its
            // parent exactly: its coefficient in the centre's ratio to the parent's, or the parent's where the centre
            // has no ratio (a fit from the priors), where its pull alone would leave it within the solver's tolerance
            if (t.parent().isPresent() && !exercised(data, rows, t)) {
                ExecutionTerm parent = t.parent().get();
                double ratio = centre.coefficient(parent) > 0 && centre.coefficient(t) > 0
                        ? centre.coefficient(t) / centre.coefficient(parent) : 1;
                model = model.with(t, model.coefficient(parent) * ratio);
            }
        }
        return model;
    }

    /**
     * Numbers the families of the runs ({@code groupOf[i]} for {@code rows[i]}, -1 for a run without one or of no
     * weight in the fit) and returns how many there are.
     */
    private static int families(List<Run> data, int[] rows, int[] groupOf) {
        java.util.Map<String, Integer> index = new java.util.HashMap<>();
        for (int i = 0; i < rows.length; i++) {
            Run r = data.get(rows[i]);
            groupOf[i] = r.family().isEmpty() || !(r.weight() > 0) ? -1
                    : index.computeIfAbsent(r.family(), k -> index.size());
        }
        return index.size();
    }

    /**
     * The shrinkage of the families' offsets, {@code σ²/τ²} (runs' worth of weight): the within-family variance of the
     * fitted model's log errors over the variance of the families' own mean errors beyond what that noise gives them
     * (a moment estimator); infinite where the families' means spread no more than their runs' noise explains.
     */
    static double familyShrinkage(List<Run> data, int[] rows, MegatronModel model, int[] groupOf, int groups) {
        List<List<Double>> e = new ArrayList<>();
        List<List<Double>> w = new ArrayList<>();
        for (int g = 0; g < groups; g++) {
            e.add(new ArrayList<>());
            w.add(new ArrayList<>());
        }
        for (int i = 0; i < rows.length; i++) {
            if (groupOf[i] >= 0) {
                Run r = data.get(rows[i]);
                e.get(groupOf[i]).add(Math.log(model.millis(r.terms()) / r.millis()));
                w.get(groupOf[i]).add(r.weight());
            }
        }
        double[] components = varianceComponents(
                e.stream().map(v -> v.stream().mapToDouble(Double::doubleValue).toArray()).toList(),
                w.stream().map(v -> v.stream().mapToDouble(Double::doubleValue).toArray()).toList());
        // NaN where the weights leave no within-family degree of freedom: no scatter to weigh the spread against
        return components[1] > 0 ? components[0] / components[1] : Double.POSITIVE_INFINITY;
    }

    /** Within-group degrees of freedom below this are none (the weights' rounding: seven runs of weight 1/7). */
    private static final double DEGREES_OF_FREEDOM_TOLERANCE = 1e-9;

    /**
     * The variance components of a one-way random-effects model by the method of moments, {@code {within, between}}:
     * the weighted variance of the values around their group's weighted mean ({@code Σ W − G} degrees of freedom,
     * {@code W} a group's weight: weights count runs, so a value of weight 2 is the value twice and two values of
     * weight ½, one configuration published twice, are one run), and the variance of the groups' means (unweighted,
     * {@code G − 1}) less what the within variance alone gives them ({@code within · mean(1/W)}), which may come out
     * at or below 0. Both are NaN where the weights leave no degree of freedom within the groups ({@code Σ W ≤ G}:
     * every group one run's worth). At least two groups; with unit weights, the textbook estimator.
     */
    static double[] varianceComponents(List<double[]> values, List<double[]> weights) {
        Checks.argument(values.size() >= 2, "variance components need two groups or more: %s", values.size());
        int groups = values.size();
        double[] means = new double[groups];
        double within = 0;
        double total = 0;
        double inverseSizes = 0;
        double grand = 0;
        for (int g = 0; g < groups; g++) {
            double[] v = values.get(g);
            double[] w = weights.get(g);
            double sw = 0;
            double sum = 0;
            for (int i = 0; i < v.length; i++) {
                sw += w[i];
                sum += w[i] * v[i];
            }
            means[g] = sum / sw;
            for (int i = 0; i < v.length; i++) {
                within += w[i] * (v[i] - means[g]) * (v[i] - means[g]);
            }
            total += sw;
            inverseSizes += 1.0 / sw / groups;
            grand += means[g] / groups;
        }
        if (!(total - groups > DEGREES_OF_FREEDOM_TOLERANCE)) {
            return new double[] {Double.NaN, Double.NaN};
        }
        within /= total - groups;
        double between = 0;
        for (double m : means) {
            between += (m - grand) * (m - grand) / (groups - 1);
        }
        return new double[] {within, between - within * inverseSizes};
    }

    /**
     * {@link #residuals} with a multiplicative offset per family ({@code phi}'s entries after the compute part's
     * log-coefficients, one per family: a family's measured times divided by {@code exp(u)}), each
     * offset pulled toward 0 with {@code lambda} runs' worth of weight.
     */
    private static double[] familyResiduals(List<Run> data, int[] rows, double[] phi, MegatronModel[] out,
            MegatronModel centre, boolean calibrate, int[] groupOf, int groups, double lambda) {
        double[] u = Arrays.copyOfRange(phi, NONLINEAR.length, NONLINEAR.length + groups);
        List<Run> shifted = new ArrayList<>(data);
        for (int i = 0; i < rows.length; i++) {
            if (groupOf[i] >= 0) {
                Run r = data.get(rows[i]);
                shifted.set(rows[i], new Run(r.terms(), r.millis() * Math.exp(-u[groupOf[i]]), r.weight(),
                        r.family(), r.job()));
            }
        }
        double[] base = residuals(shifted, rows, Arrays.copyOf(phi, NONLINEAR.length), out, centre, calibrate);
        double[] r = Arrays.copyOf(base, base.length + groups);
        for (int g = 0; g < groups; g++) {
            r[base.length + g] = Math.sqrt(lambda) * u[g];
        }
        return r;
    }

    /** Whether any of the runs has a non-zero value of the term. */
    private static boolean exercised(List<Run> data, int[] rows, ExecutionTerm t) {
        for (int i : rows) {
            if (data.get(i).terms().value(t) > 0) {
                return true;
            }
        }
        return false;
    }

    private static int indexOf(ExecutionTerm t) {
        for (int k = 0; k < NONLINEAR.length; k++) {
            if (NONLINEAR[k] == t) {
                return k;
            }
        }
        throw new IllegalStateException(t + " is not fitted on its logarithm");
    }

    /** Whether a term is pulled in this fit. */
    private static boolean pulled(ExecutionTerm t, MegatronModel centre, boolean calibrate) {
        return t.pulled() || calibrate && centre.coefficient(t) > 0;
    }

    /**
     * The additive coefficients given the compute part's times {@code base}: non-negative least squares on the runs'
     * relative errors, each row weighted by its run's weight and Huber weight, the pulled terms pulled toward the
     * centre.
     */
    private static double[] additive(List<Run> data, int[] rows, double[][] a, double[] base, double[] sw,
            double[] huber, MegatronModel centre, boolean calibrate) {
        int m = LINEAR.length;
        double[][] h = new double[m][m];
        double[] g = new double[m];
        for (int i = 0; i < rows.length; i++) {
            double target = 1 - base[i] / data.get(rows[i]).millis();
            double wi = sw[i] * sw[i] * huber[i];
            for (int j = 0; j < m; j++) {
                g[j] += wi * a[i][j] * target;
                for (int k = 0; k < m; k++) {
                    h[j][k] += wi * a[i][j] * a[i][k];
                }
            }
        }
        for (int j = 0; j < m; j++) {
            ExecutionTerm t = LINEAR[j];
            if (pulled(t, centre, calibrate)) {
                double scale = t.pulled() ? 1 : centre.coefficient(t);
                h[j][j] += PRIOR * PRIOR / (scale * scale);
                g[j] += PRIOR * PRIOR * centre.coefficient(t) / (scale * scale);
            }
            h[j][j] += 1e-12 * (1 + h[j][j]);
        }
        return org.scaledl.model.cost.Nnls.solve(h, g);
    }

    /**
     * The residual whose square is Huber's loss of a log error {@code e}: {@code e} itself within {@link #ROBUST},
     * beyond it {@code sign(e)·√(2·ROBUST·|e| − ROBUST²)}, so a run off by far more than the rest (a software path
     * of its own, a misdescribed setting) pulls the coefficients as its error, not as its error's square.
     */
    static double huberRoot(double e) {
        double abs = Math.abs(e);
        return abs <= ROBUST ? e : Math.copySign(Math.sqrt(2 * ROBUST * abs - ROBUST * ROBUST), e);
    }

    /**
     * The residuals of the model with the compute part's log-coefficients {@code phi} and the additive ones that fit
     * best given them; {@code out}, when not null, receives the model.
     */
    private static double[] residuals(List<Run> data, int[] rows, double[] phi, MegatronModel[] out,
            MegatronModel centre, boolean calibrate) {
        java.util.Map<ExecutionTerm, Double> c = new java.util.EnumMap<>(ExecutionTerm.class);
        for (ExecutionTerm t : ExecutionTerm.values()) {
            c.put(t, 0.0);
        }
        for (int k = 0; k < NONLINEAR.length; k++) {
            c.put(NONLINEAR[k], Math.exp(Math.max(-30, Math.min(30, phi[k]))));
        }
        MegatronModel compute = MegatronModel.of(c);
        int m = LINEAR.length;
        double[] base = new double[rows.length];
        double[][] a = new double[rows.length][m];
        double[] sw = new double[rows.length];
        for (int i = 0; i < rows.length; i++) {
            Run r = data.get(rows[i]);
            // the compute part and the overlapped reduction (the additive coefficients are 0 here)
            base[i] = compute.millis(r.terms());
            sw[i] = Math.sqrt(r.weight());
            for (int j = 0; j < m; j++) {
                a[i][j] = r.terms().value(LINEAR[j]) / r.millis();
            }
        }
        // inner problem: min Σ w_i h_i (a_i·x − (1 − base_i / y_i))² + PRIOR² Σ_pulled (x_k / centre_k − 1)², x ≥ 0,
        // h_i the Huber weight of the run's error at the previous solution (1 at the first)
        double[] huber = new double[rows.length];
        Arrays.fill(huber, 1);
        double[] logErrors = new double[rows.length];
        for (int pass = 0; pass < INNER_PASSES; pass++) {
            double[] x = additive(data, rows, a, base, sw, huber, centre, calibrate);
            for (int j = 0; j < m; j++) {
                c.put(LINEAR[j], x[j]);
            }
            for (int i = 0; i < rows.length; i++) {
                // the outer problem is fitted on log-ratios: unbiased in the ratio, where squared relative errors
                // favour predicting too fast (the inner problem's relative errors are its local linearisation);
                // the model's time is the compute part's plus the additive terms, summed as MegatronModel.millis
                // sums them
                Run run = data.get(rows[i]);
                double predicted = base[i];
                for (int j = 0; j < m; j++) {
                    predicted += x[j] * run.terms().value(LINEAR[j]);
                }
                logErrors[i] = Math.log(Math.max(1e-300, predicted) / run.millis());
                huber[i] = Math.abs(logErrors[i]) > ROBUST ? ROBUST / Math.abs(logErrors[i]) : 1;
            }
        }
        if (out != null) {
            out[0] = MegatronModel.of(c);
        }
        int pulled = 0;
        for (ExecutionTerm t : NONLINEAR) {
            pulled += pulled(t, centre, calibrate) ? 1 : 0;
        }
        double[] r = new double[rows.length + pulled];
        for (int i = 0; i < rows.length; i++) {
            r[i] = sw[i] * huberRoot(logErrors[i]);
        }
        int at = rows.length;
        for (int k = 0; k < NONLINEAR.length; k++) {
            if (pulled(NONLINEAR[k], centre, calibrate)) {
                // a refinement: its ratio to its parent pulled toward the centre's ratio (1 from the priors)
                // (a centre without the parent's or the term's coefficient: toward the parent's, a ratio of 1)
                double own = centre.coefficient(NONLINEAR[k]);
                Optional<ExecutionTerm> parent = NONLINEAR[k].parent();
                double toward = Math.log(own);
                if (parent.isPresent()) {
                    double of = centre.coefficient(parent.get());
                    toward = phi[indexOf(parent.get())] + (own > 0 && of > 0 ? Math.log(own / of) : 0);
                }
                r[at++] = PRIOR * (phi[k] - toward);
            }
        }
        return r;
    }
}
