package org.scaledl.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.scaledl.eval.Evaluation;
import org.scaledl.gnn.GnnBaseline;
import org.scaledl.gnn.GnnInteractions;
import org.scaledl.io.DatasetReader;
import org.scaledl.eval.Baselines;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.RuntimeTrainer;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Folds;
import org.scaledl.workload.Sample;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl evaluate}: held-out accuracy of ScaleDL and the baselines. */
@Command(name = "evaluate", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit every method on training data, predict held-out data, compare.")
final class EvaluateCommand implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Split split;

    static final class Split {
        @ArgGroup(exclusive = false)
        Holdout holdout;

        @ArgGroup(exclusive = false)
        Cv cv;
    }

    static final class Holdout {
        @Option(names = "--train", required = true, description = "Training dataset folder")
        Path train;

        @Option(names = "--test", required = true, description = "Test dataset folder")
        Path test;
    }

    static final class Cv {
        @Option(names = "--data", required = true, description = "Dataset folder")
        Path data;

        @Option(names = "--cv", required = true, description = "Leave-one-out by: family or model")
        String by;

        @Option(names = "--folds", defaultValue = "0", description = "At most this many folds, each holding several "
                + "whole groups out (for slow methods such as --gnn); default 0: leave one group out")
        int folds;
    }

    @Option(names = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Option(names = "--out", description = "Write every prediction to this CSV file")
    Path out;

    @Option(names = "--methods", split = ",", description = "Evaluate only these methods (names as in the table, "
            + "comma-separated)")
    List<String> only;

    @Override
    public Integer call() throws Exception {
        if (split.cv != null) {
            Reports.checkFolds(split.cv.folds);
        }
        if (split.holdout != null && Reports.sameFile(split.holdout.train, split.holdout.test)) {
            throw new IllegalArgumentException("--test " + org.scaledl.InvalidInputException.escaped(
                    split.holdout.test.toString()) + " is the --train folder: its runs would be predicted by models "
                    + "fitted on them (held out they are not; use --data with --cv to hold runs out of one dataset)");
        }
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);
            Reports.requireExtension(out, "the predictions", ".csv");
            if (split.holdout != null) {
                Reports.notAnInput(out, "--train", split.holdout.train);
                Reports.notAnInput(out, "--test", split.holdout.test);
            } else {
                Reports.notAnInput(out, "--data", split.cv.data);
            }
        }
        Evaluation e = run(split, gnn, only);
        if (json) {
            System.out.println(Reports.json(e));
        } else {
            Reports.table(e, System.out);
        }
        if (out != null) {
            Reports.csv(e, out);
        }
        return 0;
    }

    @Option(names = "--gnn", description = "Also evaluate the GNN stage (slow): scaledl = layer-wise + GNN, "
            + "scaledl-attention (attention message passing), scaledl-layerwise, gnn-only, gnn-only-attention")
    boolean gnn;

    /** ScaleDL's layer-wise predictor and the baselines. */
    static List<RuntimeTrainer> methods() {
        return methods(false);
    }

    /** With {@code gnn}: ScaleDL with the GNN stage as {@code scaledl} (mean aggregation) and
     * {@code scaledl-attention}, the layer-wise model as {@code scaledl-layerwise}, and the GNN alone as
     * {@code gnn-only} and {@code gnn-only-attention}, then the baselines. */
    static List<RuntimeTrainer> methods(boolean gnn) {
        List<RuntimeTrainer> m = new ArrayList<>();
        if (gnn) {
            m.add(RuntimePredictor.builder().interactions(new GnnInteractions()).build());
            m.add(RuntimePredictor.builder().name("scaledl-attention")
                    .interactions(new GnnInteractions().withAttention(true)).build());
            m.add(RuntimePredictor.builder().name("scaledl-layerwise").build());
            m.add(new GnnBaseline());
            m.add(new GnnBaseline().withAttention(true));
        } else {
            m.add(RuntimePredictor.builder().build());
        }
        m.addAll(Baselines.all());
        return m;
    }

    private static Evaluation run(Split s, boolean gnn, List<String> only) {
        List<RuntimeTrainer> methods = new ArrayList<>(methods(gnn));
        if (only != null) {
            List<String> known = methods.stream().map(RuntimeTrainer::name).toList();
            for (String m : only) {
                if (!known.contains(m)) {
                    throw new IllegalArgumentException("unknown method '" + m + "'; known: " + known);
                }
            }
            if (gnn) {
                // --gnn adds its methods; a selection naming none of them would silently ignore it
                List<String> baselines = Baselines.all().stream().map(RuntimeTrainer::name).toList();
                if (only.stream().allMatch(baselines::contains)) {
                    throw new IllegalArgumentException("--gnn evaluates the GNN stage's methods ("
                            + String.join(", ", known.stream().filter(n -> !baselines.contains(n)).toList())
                            + "); --methods names none of them");
                }
            }
            methods.removeIf(m -> !only.contains(m.name()));
        }
        if (s.holdout != null) {
            Dataset train = DatasetReader.read(s.holdout.train);
            Dataset test = DatasetReader.read(s.holdout.test);
            long repeated = Reports.runsOf(test.samples(), train.samples());
            if (repeated == test.size()) {
                throw new IllegalArgumentException("every run of --test " + org.scaledl.InvalidInputException.escaped(
                        s.holdout.test.toString()) + " is a run of --train (the same job and measured time): held out "
                        + "they are not (a copy of the training data?)");
            }
            if (repeated > 0) {
                System.err.printf(java.util.Locale.ROOT, "scaledl: warning: %d of the %d --test runs are runs of "
                        + "--train (the same job and measured time): their scores are not held out%n", repeated,
                        test.size());
            }
            return Evaluation.holdout(methods, train.samples(), test.samples());
        }
        String by = s.cv.by;
        if (!by.equals("family") && !by.equals("model")) {
            throw new IllegalArgumentException("--cv must be family or model, got '" + by + "'");
        }
        List<Sample> samples = DatasetReader.read(s.cv.data).samples();
        long groups = Folds.groups(samples, Folds.byTagStrict(by)).stream().distinct().count();
        if (s.cv.folds > groups && groups >= 2) {
            System.err.printf(java.util.Locale.ROOT, "scaledl: note: --folds %d, but the data has %d %s: each held out "
                    + "alone (leave one %s out)%n", s.cv.folds, groups, by.equals("family") ? "families" : "models", by);
        }
        Progress progress = Progress.of("evaluate", Main.quiet);
        return Evaluation.crossValidate(methods, samples, by, s.cv.folds,
                (m, f, done, total) -> progress.update(done, total, m + ", " + by + " " + f + " held out"));
    }
}
