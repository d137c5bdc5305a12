package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.eval.ClusterEvaluation;
import org.scaledl.io.GpuData;
import org.scaledl.workload.Sample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl evaluate-clusters --data datasets/gpu}: the cluster execution fitted on some of the published
 * cluster runs ({@code llm-public/runs.csv}, with vTrain's single-node runs always) and scored on the others, split by
 * family, by system, small clusters to large, and the newest GPU from its catalog row.
 */
@Command(name = "evaluate-clusters", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit the cluster execution on some of the published cluster runs (llm-public/runs.csv under "
                + "--data) and score the others: each model family held out, each system held out, <= 64 GPUs -> "
                + "larger clusters, the newest GPU held out; MRE with the signed bias, and the 90%% interval's "
                + "coverage.")
final class EvaluateClustersCommand implements Callable<Integer> {
    @Option(names = "--data", defaultValue = "datasets/gpu", description = "GPU data root (default "
            + "${DEFAULT-VALUE})")
    Path data;

    @Option(names = "--newest", defaultValue = "NVIDIA GB200", description = "The GPU held out whole as the newest "
            + "generation (default ${DEFAULT-VALUE})")
    String newest;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Override
    public Integer call() throws Exception {
        long t0 = System.nanoTime();
        GpuData d = GpuData.read(data, Catalogs.of(null, data));
        List<Sample> published = d.publishedRuns();
        if (published.isEmpty()) {
            throw new IllegalArgumentException(data + " has no published cluster runs (" + GpuData.LLM_PUBLIC + ")");
        }
        String gpu = Catalogs.of(null, data).require(newest).name();
        ClusterEvaluation e = ClusterEvaluation.run(EvaluateMegatronCommand.withoutMegatron(d), d.vtrainRuns(),
                published, gpu);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("published_runs", published.size());
            root.put("vtrain_runs", d.vtrainRuns().size());
            root.put("seconds", seconds);
            ArrayNode arr = root.putArray("splits");
            for (ClusterEvaluation.Split s : e.splits()) {
                arr.addObject().put("name", s.name().strip()).put("train_runs", s.trainRuns())
                        .put("test_runs", s.testRuns()).put("mre", s.mre()).put("bias", s.bias())
                        .put("median", s.median()).put("p90", s.p90()).put("coverage", s.coverage());
            }
            System.out.println(om.writerWithDefaultPrettyPrinter().writeValueAsString(root));
            return 0;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%d published cluster runs (%s) with %d vTrain "
                + "runs always fitted%n", published.size(), data.resolve(GpuData.LLM_PUBLIC), d.vtrainRuns().size()));
        b.append(String.format(Locale.ROOT, "%-58s %6s %5s %7s %7s %7s %7s %8s%n", "split", "train", "test", "MRE",
                "bias", "median", "p90", "in 90%"));
        for (ClusterEvaluation.Split s : e.splits()) {
            b.append(String.format(Locale.ROOT, "%-58s %6.0f %5d %6.1f%% %+6.1f%% %6.1f%% %6.1f%% %7.0f%%%n",
                    s.name(), s.trainRuns(), s.testRuns(), 100 * s.mre(), 100 * s.bias(), 100 * s.median(),
                    100 * s.p90(), 100 * s.coverage()));
        }
        b.append(String.format(Locale.ROOT, "(%.0f s; bias > 0: predicted too slow)", seconds));
        System.out.println(b);
        return 0;
    }
}
