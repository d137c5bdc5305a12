package org.scaledl.eval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.scaledl.Checks;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.Prediction;
import org.scaledl.model.PredictionWarning;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Sample;

/**
 * How the cluster execution learnt from published runs carries to runs it did not see, split the way the judges of a
 * planner split them: each model family held out, each system (GPU generation and its network) held out, small
 * clusters (at most {@value #SMALL_GPUS} GPUs) fitted and larger ones predicted, the newest GPU held out whole (its
 * runs predicted from its catalog row), and the newest software releases held out (their runs predicted from the runs
 * published before them, {@link #newerReleases}). The Megatron coefficients are refitted on each split's training runs
 * (the published ones not held out, plus every {@code always} run, such as vTrain's single-node runs); the layer model
 * is the base predictor's. Each split reports the MRE with the signed bias beside it (positive: predicted too slow),
 * the median and 90th percentile, and the share of held-out runs inside their 90 % interval.
 *
 * <pre>{@code
 * ClusterEvaluation e = ClusterEvaluation.run(deviceOnly, vtrainRuns, publishedRuns, "NVIDIA GB200");
 * e.splits().forEach(s -> System.out.println(s.name() + " " + s.mre() + " " + s.bias()));
 * }</pre>
 *
 * @param splits      the splits: in sample, families, systems, small to large, newest GPU, newer releases (where
 *                    the runs' releases are dated; and where asked, each cluster), then per system of the
 *                    pooled family split, its dense jobs and mixtures of experts, its jobs whose recomputation was
 *                    chosen at the memory edge ({@code NEAR_MEMORY_LIMIT}) and the others, and per system of the
 *                    small-to-large split (and of the cluster split)
 * @param predictions every run each of the five to seven splits scored, with its prediction (in the order of the
 *                    splits, and within one, of the published runs)
 */
public record ClusterEvaluation(List<Split> splits, List<Scored> predictions) {
    /** The largest cluster of the "small" side of the small-to-large split. */
    public static final int SMALL_GPUS = 64;

    /** Copies. */
    public ClusterEvaluation {
        splits = List.copyOf(splits);
        predictions = List.copyOf(predictions);
    }

    /**
     * One run a split scored: what the model fitted without it predicted.
     *
     * @param split     the split's key: {@code in_sample}, {@code family}, {@code system}, {@code small_to_large},
     *                  {@code newest_gpu}, {@code newer_release} or (asked for) {@code cluster}
     * @param run       the published run (its tags name its family, system, release and id)
     * @param predicted the point prediction (ms)
     * @param low       the 90 % interval's lower end (ms)
     * @param high      its upper end (ms)
     */
    public record Scored(String split, Sample run, double predicted, double low, double high) {
        /** The relative error, {@code predicted / measured − 1} (positive: predicted too slow). */
        public double error() {
            return predicted / run.millis() - 1;
        }
    }

    /**
     * One split's held-out relative errors.
     *
     * @param name      what was held out
     * @param trainRuns published runs fitted on (for pooled leave-one-group-out splits, the mean over folds)
     * @param testRuns  runs scored
     * @param mre       mean |predicted / measured − 1|
     * @param bias      mean signed relative error (positive: predicted too slow)
     * @param median    median absolute relative error
     * @param p90       90th percentile of it
     * @param coverage  share of the scored runs inside their 90 % interval
     */
    public record Split(String name, double trainRuns, int testRuns, double mre, double bias, double median,
            double p90, double coverage) {
    }

    /**
     * Runs every split.
     *
     * @param base      a device predictor whose Megatron coefficients the runs fit
     * @param always    runs in every training set (vTrain's single-node runs), never scored
     * @param published published cluster runs, tagged {@code family} and {@code system}
     * @param newest    the GPU whose runs the newest-GPU split holds out (its device name)
     */
    public static ClusterEvaluation run(RuntimePredictor base, List<Sample> always, List<Sample> published,
            String newest) {
        return run(base, always, published, newest, false);
    }

    /**
     * {@link #run(RuntimePredictor, List, List, String)}, with {@code eachCluster} also each cluster held out (a
     * system and a software release, the runs' {@code system} and {@code release} tags: a new cluster of a GPU and
     * families the fit has seen, as a user's own cluster is) and its errors per system, after the newest-GPU split.
     * That split refits once per cluster, dozens of times on published data.
     */
    public static ClusterEvaluation run(RuntimePredictor base, List<Sample> always, List<Sample> published,
            String newest, boolean eachCluster) {
        Checks.argument(!published.isEmpty(), "no published runs to evaluate");
        List<Split> out = new ArrayList<>();
        List<Scored> scored = new ArrayList<>();
        List<Sample> all = concat(always, published);
        List<double[]> inSample = new ArrayList<>();
        out.add(score("fitted on all runs (in sample)", published.size(), published, base.calibrate(all),
                inSample));
        record(scored, "in_sample", published, inSample);
        List<double[]> familyErrors = new ArrayList<>();
        Split family = groups("each family held out", base, always, published, tag("family"), familyErrors);
        out.add(family);
        record(scored, "family", published, familyErrors);
        List<double[]> systemErrors = new ArrayList<>();
        out.add(groups("each system held out", base, always, published, tag("system"), systemErrors));
        record(scored, "system", published, systemErrors);
        java.util.function.Predicate<Sample> small = s -> s.workload().parallelism().ranks() <= SMALL_GPUS;
        List<double[]> largeErrors = new ArrayList<>();
        Split large = split("<= " + SMALL_GPUS + " GPUs -> larger clusters", base, always, published, small,
                largeErrors);
        out.add(large);
        List<Sample> larger = published.stream().filter(small.negate()).toList();
        record(scored, "small_to_large", larger, largeErrors);
        Predicate<Sample> older = s -> !s.workload().device().map(d -> d.name().equals(newest)).orElse(false);
        List<double[]> newestErrors = new ArrayList<>();
        out.add(split("newest GPU held out (" + newest + ", from its catalog row)", base, always, published, older,
                newestErrors));
        record(scored, "newest_gpu", published.stream().filter(older.negate()).toList(), newestErrors);
        List<String> newer = newerReleases(published);
        if (!newer.isEmpty()) {
            Predicate<Sample> before = s -> !newer.contains(s.workload().tag("release").orElse(""));
            List<double[]> newerErrors = new ArrayList<>();
            out.add(split("newer releases held out (" + newer.get(0) + " to " + newer.get(newer.size() - 1)
                    + ", from the runs before)", base, always, published, before, newerErrors));
            record(scored, "newer_release", published.stream().filter(before.negate()).toList(), newerErrors);
        }
        List<double[]> clusterErrors = new ArrayList<>();
        Split clusters = null;
        if (eachCluster) {
            clusters = groups("each cluster held out (system and release)", base, always, published,
                    ClusterEvaluation::cluster, clusterErrors);
            out.add(clusters);
            record(scored, "cluster", published, clusterErrors);
        }
        // the family and small-to-large splits' errors per system: where the bias sits
        bySystem(out, "  family held out, on ", family.trainRuns(), published, familyErrors);
        // and per kind of job and of interval: dense or mixture of experts, recomputation chosen at the memory edge
        byFlag(out, "  family held out, ", family.trainRuns(), familyErrors, KIND, "mixtures of experts", "dense");
        byFlag(out, "  family held out, ", family.trainRuns(), familyErrors, EDGE,
                "recomputation chosen at the memory edge", "the other runs");
        bySystem(out, "  <= " + SMALL_GPUS + " GPUs -> larger, on ", large.trainRuns(), larger, largeErrors);
        if (clusters != null) {
            bySystem(out, "  cluster held out, on ", clusters.trainRuns(), published, clusterErrors);
        }
        return new ClusterEvaluation(out, scored);
    }

    /** The largest share of the published runs the newer-release split holds out. */
    static final double NEWER_SHARE = 0.25;

    /**
     * A release tag dated as NGC containers are: {@code YY.MM}, the month with or without its leading zero, with an
     * optional patch of at most nine digits ({@code 26.04.01}, {@code 26.4.1}; a longer one is no container's, and
     * its tag is undated).
     */
    private static final java.util.regex.Pattern DATED =
            java.util.regex.Pattern.compile("(\\d{2})\\.(\\d{1,2})(?:\\.(\\d{1,9}))?");

    /**
     * The software releases the newer-release split holds out: the newest releases tagged {@code YY.MM} or
     * {@code YY.MM.patch} (NGC containers' dating; tags that name one date, {@code 26.04.1} and {@code 26.04.01}, are
     * one release), taken newest first while their runs stay within a quarter of the published runs
     * ({@value #NEWER_SHARE}), and at least one dated release left before them. Runs of other releases (a
     * preparation's, an undated branch's) are fitted, never scored: the split asks what the same sources' next
     * releases take, from the runs published before them. Empty (and the split left out) where no run's release is
     * so dated, where only one release is, and where the newest release alone holds more than a quarter of the runs.
     * In date order (one date's tags alphabetically).
     */
    public static List<String> newerReleases(List<Sample> published) {
        // by date, (year, month, patch or -1): its tags and its runs
        TreeMap<int[], java.util.Set<String>> dated = new TreeMap<>(Arrays::compare);
        TreeMap<int[], Integer> runs = new TreeMap<>(Arrays::compare);
        for (Sample s : published) {
            String r = s.workload().tag("release").orElse("");
            java.util.regex.Matcher m = DATED.matcher(r);
            if (m.matches()) {
                int[] key = {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    m.group(3) == null ? -1 : Integer.parseInt(m.group(3))};
                dated.computeIfAbsent(key, k -> new java.util.TreeSet<>()).add(r);
                runs.merge(key, 1, Integer::sum);
            }
        }
        List<int[]> held = new ArrayList<>();
        int count = 0;
        for (int[] key : dated.descendingKeySet()) {
            if (held.size() == dated.size() - 1 || count + runs.get(key) > NEWER_SHARE * published.size()) {
                break;
            }
            count += runs.get(key);
            held.add(key);
        }
        // in date order (the split's label names the first and the last)
        List<String> out = new ArrayList<>();
        for (int i = held.size() - 1; i >= 0; i--) {
            out.addAll(dated.get(held.get(i)));
        }
        return List.copyOf(out);
    }

    /** Each scored run of a split with its prediction ({@code errors} in the order of {@code tested}). */
    private static void record(List<Scored> out, String split, List<Sample> tested, List<double[]> errors) {
        for (int i = 0; i < errors.size(); i++) {
            double[] e = errors.get(i);
            out.add(new Scored(split, tested.get(i), e[PREDICTED], e[LOW], e[HIGH]));
        }
    }

    /**
     * Calibrating on a few runs of one's own cluster, judged on published runs: for each system and software release
     * with enough runs, the model fitted without that group's runs (as a user's cluster is unseen), its error on the
     * group, and its error on the group's other runs after calibrating on {@code n} of them, chosen as
     * {@code plan --runs n} chooses them ({@link org.scaledl.model.plan.ProfilingPlan#forCalibration}: the most
     * representative below {@link org.scaledl.model.exec.MegatronFit#TERM_RUNS}, else D-optimal) or at random (the
     * mean over {@code draws} draws).
     *
     * @param group    {@code system release} of the runs
     * @param runs     the group's runs
     * @param before   MRE on the group before calibration
     * @param beforeBias its mean signed error
     * @param n        runs calibrated on
     * @param planned  MRE on the other runs after calibrating on the planned ones
     * @param plannedBias its mean signed error
     * @param random   MRE after calibrating on random runs (mean over the draws)
     * @param randomBias its mean signed error
     * @param beforeInside the share of the group's runs inside their 90 % interval before calibration
     * @param plannedInside the share of the other runs inside it after calibrating on the planned ones
     * @param randomInside  the share after calibrating on random runs (mean over the draws)
     */
    public record Calibration(String group, int runs, double before, double beforeBias, int n, double planned,
            double plannedBias, double random, double randomBias, double beforeInside, double plannedInside,
            double randomInside) {
    }

    /**
     * The fewest runs a group needs in the calibration experiment: the most it is calibrated on ({@code max(ns)}) and
     * three more to score.
     */
    public static int fewestCalibrationRuns(int[] ns) {
        return Arrays.stream(ns).max().orElse(1) + 3;
    }

    /**
     * Runs the calibration experiment (see {@link Calibration}) for every group of at least
     * {@link #fewestCalibrationRuns} runs.
     *
     * @param base      a device predictor whose Megatron coefficients the runs fit
     * @param always    runs in every fit (vTrain's), never scored
     * @param published published runs, tagged {@code system} and {@code release}
     * @param ns        how many runs to calibrate on (e.g. 1, 3, 5)
     * @param draws     random draws per group and n
     * @param seed      seed of the plans' exchanges and the random draws
     */
    public static List<Calibration> calibration(RuntimePredictor base, List<Sample> always, List<Sample> published,
            int[] ns, int draws, long seed) {
        return calibration(base, always, published, ns, draws, seed, ClusterEvaluation::cluster);
    }

    /**
     * The calibration experiment ({@link #calibration(RuntimePredictor, List, List, int[], int, long)}) over other
     * groups: {@code group} names each run's ({@code s -> system}: a system held out with every release of it, as a
     * new generation's first cluster is unseen).
     */
    public static List<Calibration> calibration(RuntimePredictor base, List<Sample> always, List<Sample> published,
            int[] ns, int draws, long seed, java.util.function.Function<Sample, String> group) {
        int fewest = fewestCalibrationRuns(ns);
        Map<String, List<Sample>> groups = new TreeMap<>();
        for (Sample s : published) {
            groups.computeIfAbsent(group.apply(s), k -> new ArrayList<>()).add(s);
        }
        List<Calibration> out = new ArrayList<>();
        java.util.Random random = new java.util.Random(seed);
        for (Map.Entry<String, List<Sample>> g : groups.entrySet()) {
            List<Sample> mine = g.getValue();
            if (mine.size() < fewest) {
                continue;
            }
            List<Sample> others = published.stream().filter(s -> !mine.contains(s)).toList();
            RuntimePredictor unseen = base.calibrate(concat(always, others));
            double[] before = mreBias(unseen, mine);
            List<org.scaledl.workload.Workload> jobs = mine.stream().map(Sample::workload).toList();
            for (int n : ns) {
                List<Integer> chosen = org.scaledl.model.plan.ProfilingPlan.forCalibration(jobs, List.of(), n, seed,
                        unseen::designRow).indices();
                double[] planned = calibrated(unseen, mine, chosen);
                double mre = 0;
                double bias = 0;
                double inside = 0;
                for (int k = 0; k < draws; k++) {
                    double[] r = calibrated(unseen, mine, shuffled(mine.size(), random).subList(0, n));
                    mre += r[0] / draws;
                    bias += r[1] / draws;
                    inside += r[2];
                }
                inside = Math.min(1, inside / draws);
                out.add(new Calibration(g.getKey(), mine.size(), before[0], before[1], n, planned[0], planned[1],
                        mre, bias, before[2], planned[2], inside));
            }
        }
        return out;
    }

    /**
     * One point of the learning curve ({@link #learningCurve}): what a budget of profiling GPU-hours buys, chosen
     * D-optimally (priced: {@code plan --budget-gpu-hours}) or at random (runs drawn in random order while the budget
     * lasts, the mean over the draws), and how the model fitted on those runs (and vTrain's) scores the held-out
     * families.
     *
     * @param budgetGpuHours the budget
     * @param plannedRuns    runs the D-optimal plan bought
     * @param plannedGpuHours what they cost
     * @param planned        held-out MRE after fitting them
     * @param plannedBias    its mean signed error
     * @param randomRuns     runs the random draws bought (mean)
     * @param random         held-out MRE after fitting them (mean over the draws)
     * @param randomBias     its mean signed error
     */
    public record CurvePoint(double budgetGpuHours, int plannedRuns, double plannedGpuHours, double planned,
            double plannedBias, double randomRuns, double random, double randomBias) {
    }

    /**
     * A learning curve in GPU-hours of which published runs to add: the model families split in two (every other
     * family, by name, held out), the held-out half scored after fitting vTrain's runs plus the runs a budget buys of
     * the other half. A run costs its GPUs × {@code cost.seconds(its measured step)} (the start-up, warm-up and timed
     * iterations of a measurement); the first point (budget 0) is vTrain alone.
     *
     * @param base     a device predictor whose Megatron coefficients the runs fit
     * @param always   runs in every fit (vTrain's), never scored
     * @param published published runs, tagged {@code family}
     * @param budgets  GPU-hour budgets, ascending
     * @param cost     what measuring a run costs
     * @param draws    random draws per budget
     * @param seed     seed of the plans' exchanges and the random draws
     * @return the points, and (last) the whole other half fitted
     */
    public static List<CurvePoint> learningCurve(RuntimePredictor base, List<Sample> always, List<Sample> published,
            double[] budgets, org.scaledl.model.plan.ProfilingCost cost, int draws, long seed) {
        List<String> families = published.stream().map(s -> s.workload().tag("family").orElse("?")).distinct()
                .sorted().toList();
        List<Sample> pool = new ArrayList<>();
        List<Sample> test = new ArrayList<>();
        for (Sample s : published) {
            (families.indexOf(s.workload().tag("family").orElse("?")) % 2 == 0 ? test : pool).add(s);
        }
        Checks.argument(!pool.isEmpty() && !test.isEmpty(), "a learning curve needs at least two model families");
        double[] costs = new double[pool.size()];
        for (int i = 0; i < costs.length; i++) {
            Sample s = pool.get(i);
            costs[i] = cost.seconds(s.millis()) * s.workload().parallelism().ranks() / 3600.0;
        }
        RuntimePredictor prior = base.calibrate(always);
        List<org.scaledl.workload.Workload> jobs = pool.stream().map(Sample::workload).toList();
        java.util.Random random = new java.util.Random(seed);
        List<CurvePoint> out = new ArrayList<>();
        double[] none = mreBias(prior, test);
        out.add(new CurvePoint(0, 0, 0, none[0], none[1], 0, none[0], none[1]));
        for (double budget : budgets) {
            List<Integer> chosen;
            try {
                chosen = org.scaledl.model.plan.ProfilingPlan.withinBudget(jobs, List.of(), costs, budget, seed,
                        prior::designRow).indices();
            } catch (IllegalArgumentException e) {
                continue;   // no run fits this budget
            }
            double spent = chosen.stream().mapToDouble(i -> costs[i]).sum();
            double[] planned = mreBias(base.calibrate(concat(always, pick(pool, chosen))), test);
            double runs = 0;
            double mre = 0;
            double bias = 0;
            for (int k = 0; k < draws; k++) {
                List<Integer> bought = new ArrayList<>();
                double left = budget;
                for (int i : shuffled(pool.size(), random)) {
                    if (costs[i] <= left) {
                        bought.add(i);
                        left -= costs[i];
                    }
                }
                double[] r = mreBias(base.calibrate(concat(always, pick(pool, bought))), test);
                runs += (double) bought.size() / draws;
                mre += r[0] / draws;
                bias += r[1] / draws;
            }
            out.add(new CurvePoint(budget, chosen.size(), spent, planned[0], planned[1], runs, mre, bias));
        }
        double[] all = mreBias(base.calibrate(concat(always, pool)), test);
        double total = java.util.Arrays.stream(costs).sum();
        out.add(new CurvePoint(total, pool.size(), total, all[0], all[1], pool.size(), all[0], all[1]));
        return out;
    }

    /** The indices {@code 0..n-1} in a random order. */
    private static List<Integer> shuffled(int n, java.util.Random random) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, random);
        return order;
    }

    private static List<Sample> pick(List<Sample> runs, List<Integer> indices) {
        List<Sample> out = new ArrayList<>();
        for (int i : indices) {
            out.add(runs.get(i));
        }
        return out;
    }

    /** MRE and bias on the runs not chosen, after calibrating on the chosen ones. */
    private static double[] calibrated(RuntimePredictor p, List<Sample> runs, List<Integer> chosen) {
        List<Sample> fit = new ArrayList<>();
        List<Sample> rest = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            (chosen.contains(i) ? fit : rest).add(runs.get(i));
        }
        return mreBias(p.calibrate(fit), rest);
    }

    /** A predictor's MRE, mean signed error and share inside the 90 % interval on runs. */
    private static double[] mreBias(RuntimePredictor p, List<Sample> runs) {
        double mre = 0;
        double bias = 0;
        int inside = 0;
        for (Sample s : runs) {
            org.scaledl.model.Prediction pr = p.predict(s.workload());
            double e = pr.millis() / s.millis() - 1;
            mre += Math.abs(e) / runs.size();
            bias += e / runs.size();
            inside += pr.lowMillis() <= s.millis() && s.millis() <= pr.highMillis() ? 1 : 0;
        }
        return new double[] {mre, bias, (double) inside / runs.size()};
    }

    /** One row per system of a split's errors ({@code errors} in the order of {@code tested}). */
    private static void bySystem(List<Split> out, String prefix, double train, List<Sample> tested,
            List<double[]> errors) {
        Map<String, List<double[]>> by = new TreeMap<>();
        for (int i = 0; i < errors.size(); i++) {
            by.computeIfAbsent(tested.get(i).workload().tag("system").orElse("?"), k -> new ArrayList<>())
                    .add(errors.get(i));
        }
        by.forEach((k, v) -> out.add(summary(prefix + k, train, v)));
    }

    /** A run's value of a tag ({@code "?"} without it). */
    private static Function<Sample, String> tag(String tag) {
        return s -> s.workload().tag(tag).orElse("?");
    }

    /** A run's cluster ({@link org.scaledl.model.exec.MegatronFit#cluster}). */
    private static String cluster(Sample s) {
        return org.scaledl.model.exec.MegatronFit.cluster(s.workload());
    }

    private static List<Sample> concat(List<Sample> a, List<Sample> b) {
        List<Sample> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /**
     * Leave-one-group-out over the published runs; {@code errors} receives each run's [relative error, inside] in the
     * order of {@code published}.
     */
    private static Split groups(String name, RuntimePredictor base, List<Sample> always, List<Sample> published,
            Function<Sample, String> group, List<double[]> errors) {
        Map<String, List<Integer>> groups = new TreeMap<>();
        for (int i = 0; i < published.size(); i++) {
            groups.computeIfAbsent(group.apply(published.get(i)), k -> new ArrayList<>()).add(i);
        }
        double[][] e = new double[published.size()][];
        double train = 0;
        for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
            List<Sample> fit = new ArrayList<>(always);
            for (int i = 0; i < published.size(); i++) {
                if (!g.getValue().contains(i)) {
                    fit.add(published.get(i));
                }
            }
            train += (double) (fit.size() - always.size()) / groups.size();
            RuntimePredictor p = base.calibrate(fit);
            for (int i : g.getValue()) {
                e[i] = error(p, published.get(i));
            }
        }
        errors.addAll(Arrays.asList(e));
        return summary(name + " (" + groups.size() + " folds)", train, Arrays.asList(e));
    }

    private static Split split(String name, RuntimePredictor base, List<Sample> always, List<Sample> published,
            Predicate<Sample> train, List<double[]> errors) {
        List<Sample> fit = published.stream().filter(train).toList();
        List<Sample> test = published.stream().filter(train.negate()).toList();
        if (fit.isEmpty() || test.isEmpty()) {
            return new Split(name + " (empty)", fit.size(), 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                    Double.NaN);
        }
        return score(name, fit.size(), test, base.calibrate(concat(always, fit)), errors);
    }

    private static Split score(String name, double train, List<Sample> test, RuntimePredictor p,
            List<double[]> errors) {
        for (Sample s : test) {
            errors.add(error(p, s));
        }
        return summary(name, train, errors);
    }

    /** Where {@link #error} keeps whether the run is a mixture of experts. */
    static final int KIND = 2;
    /** Where {@link #error} keeps whether its prediction was warned {@code NEAR_MEMORY_LIMIT}. */
    private static final int EDGE = 3;
    /** Where {@link #error} keeps the point prediction and its interval (ms). */
    private static final int PREDICTED = 4;
    private static final int LOW = 5;
    private static final int HIGH = 6;

    /**
     * A run's relative error, whether its measurement lies inside the prediction's interval, whether it is a mixture
     * of experts ({@link #KIND}), whether its recomputation was chosen at the memory edge ({@link #EDGE}), and the
     * prediction with its interval ({@link #PREDICTED}, {@link #LOW}, {@link #HIGH}).
     */
    private static double[] error(RuntimePredictor p, Sample s) {
        Prediction pr = p.predictScored(s.workload());
        boolean inside = s.millis() >= pr.lowMillis() && s.millis() <= pr.highMillis();
        boolean experts = s.workload().graph().transformer().map(TransformerShape::mixtureOfExperts).orElse(false);
        boolean edge = pr.warnings().stream().anyMatch(w -> w.kind() == PredictionWarning.Kind.NEAR_MEMORY_LIMIT);
        return new double[] {pr.millis() / s.millis() - 1, inside ? 1 : 0, experts ? 1 : 0, edge ? 1 : 0, pr.millis(),
            pr.lowMillis(), pr.highMillis()};
    }

    /**
     * A split's errors in two rows, those with a flag ({@link #KIND}, {@link #EDGE}) set, then the others; neither
     * row where one of them holds no runs (the other would repeat the split's own figures).
     */
    static void byFlag(List<Split> out, String prefix, double train, List<double[]> errors, int flag,
            String set, String unset) {
        List<double[]> with = errors.stream().filter(x -> x[flag] == 1).toList();
        List<double[]> without = errors.stream().filter(x -> x[flag] == 0).toList();
        if (with.isEmpty() || without.isEmpty()) {
            // one kind alone: its row would repeat the split's own under a name that says otherwise
            return;
        }
        out.add(summary(prefix + set, train, with));
        out.add(summary(prefix + unset, train, without));
    }

    private static Split summary(String name, double train, List<double[]> errors) {
        double[] abs = errors.stream().mapToDouble(x -> Math.abs(x[0])).sorted().toArray();
        int n = abs.length;
        return new Split(name, train, n, Arrays.stream(abs).average().orElse(Double.NaN), errors.stream()
                .mapToDouble(x -> x[0]).average().orElse(Double.NaN), n == 0 ? Double.NaN : abs[n / 2],
                n == 0 ? Double.NaN : abs[Math.min(n - 1, (int) (0.9 * n))], errors.stream().mapToDouble(x -> x[1])
                        .average().orElse(Double.NaN));
    }
}
