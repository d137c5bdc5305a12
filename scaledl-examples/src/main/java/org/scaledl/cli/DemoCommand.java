package org.scaledl.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.scaledl.eval.Evaluation;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Dataset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl demo}: leave-one-family-out evaluation on the bundled dataset. */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Leave-one-family-out evaluation on the bundled dataset; writes "
        + "predicted-vs-measured.svg and predictions.csv.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--data", defaultValue = "datasets/cpu-ddp", description = "Dataset (default: ${DEFAULT-VALUE})")
    Path data;

    @Option(names = "--out-dir", defaultValue = ".", description = "Where to write the SVG and CSV")
    Path outDir;

    @Override
    public Integer call() {
        if (!Files.isDirectory(data)) {
            throw org.scaledl.InvalidInputException.of("dataset folder " + data.toAbsolutePath()
                    + " not found: run from the repository root or pass --data");
        }
        Path svg = outDir.resolve("predicted-vs-measured.svg");
        Path csv = outDir.resolve("predictions.csv");
        // where the results go, checked before the evaluation: nothing written if one of them cannot be
        org.scaledl.model.file.SafeFiles.checkWritable(svg);
        org.scaledl.model.file.SafeFiles.checkWritable(csv);
        long t0 = System.nanoTime();
        Dataset d = DatasetReader.read(data);
        System.out.printf("dataset %s: %d measured workloads, %d model families%n", d.name(), d.size(),
                d.distinct("family").size());
        System.out.println("leave-one-family-out: every prediction comes from models fitted without that family");
        System.out.println();
        Progress progress = Progress.of("demo", Main.quiet);
        Evaluation e = Evaluation.crossValidate(EvaluateCommand.methods(), d.samples(), "family",
                (m, f, done, total) -> progress.update(done, total, m + ", family " + f + " held out"));
        Reports.table(e, System.out);
        Reports.svg(e, svg);
        Reports.csv(e, csv);
        System.out.printf("%nwrote %s and %s (%.1f s)%n", svg, csv, (System.nanoTime() - t0) / 1e9);
        return 0;
    }
}
