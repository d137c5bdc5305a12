package org.scaledl.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.scaledl.data.Dataset;
import org.scaledl.data.DatasetReader;
import org.scaledl.eval.Evaluation;
import org.scaledl.model.Baselines;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.model.RuntimeTrainer;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl evaluate}: held-out accuracy of ScaleDL and the baselines. */
@Command(name = "evaluate", description = "Fit every method on training data, predict held-out data, compare.")
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
    }

    @Option(names = "--json", description = "Print JSON instead of a table")
    boolean json;

    @Option(names = "--out", description = "Write every prediction to this CSV file")
    Path out;

    @Override
    public Integer call() throws Exception {
        Evaluation e = run(split);
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

    static List<RuntimeTrainer> methods() {
        List<RuntimeTrainer> m = new ArrayList<>();
        m.add(RuntimePredictor.builder().build());
        m.addAll(Baselines.all());
        return m;
    }

    private static Evaluation run(Split s) {
        if (s.holdout != null) {
            Dataset train = DatasetReader.read(s.holdout.train);
            Dataset test = DatasetReader.read(s.holdout.test);
            return Evaluation.holdout(methods(), train.samples(), test.samples());
        }
        String by = s.cv.by;
        if (!by.equals("family") && !by.equals("model")) {
            throw new IllegalArgumentException("--cv must be family or model, got '" + by + "'");
        }
        return Evaluation.crossValidate(methods(), DatasetReader.read(s.cv.data).samples(), by);
    }
}
