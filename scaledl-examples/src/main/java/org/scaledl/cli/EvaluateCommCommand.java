package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.scaledl.eval.ErrorMetrics;
import org.scaledl.model.comm.AllReduceModel;
import org.scaledl.workload.CollectiveMeasurement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl evaluate-comm}: validates the all-reduce model on DeepBench's measurements, fitting on runs with
 * at most {@code --train-max-ranks} ranks and predicting the larger (multi-node) ones.
 */
@Command(name = "evaluate-comm", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Fit the all-reduce model on small runs of DeepBench's allreduce.csv "
        + "and predict the larger multi-node runs.")
final class EvaluateCommCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, description = "DeepBench allreduce.csv")
    Path data;

    @Option(names = "--train-max-ranks", defaultValue = "8",
            description = "Fit on runs with at most this many ranks (default 8)")
    int maxRanks;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (maxRanks < 2) {
            throw new IllegalArgumentException("--train-max-ranks must be 2 or more (an all-reduce takes 2 ranks), got "
                    + maxRanks);
        }
        List<CollectiveMeasurement> all = org.scaledl.io.CollectiveTables.readDeepBench(data);
        if (all.isEmpty()) {
            throw org.scaledl.InvalidInputException.inSource(data.toString(), "no rows: nothing to fit or predict");
        }
        List<CollectiveMeasurement> train = all.stream().filter(m -> m.ranks() <= maxRanks).toList();
        List<CollectiveMeasurement> test = all.stream().filter(m -> m.ranks() > maxRanks).toList();
        if (test.isEmpty()) {
            throw new IllegalArgumentException("--train-max-ranks " + maxRanks + ": no runs of " + data
                    + " with more ranks are left to predict (its largest has " + all.stream()
                    .mapToInt(CollectiveMeasurement::ranks).max().orElse(0) + ")");
        }
        if (train.size() < 2) {
            throw new IllegalArgumentException("--train-max-ranks " + maxRanks + ": " + train.size() + " run"
                    + (train.size() == 1 ? "" : "s") + " of " + data + " with that many ranks or fewer, too few to fit "
                    + "on (2 or more)");
        }
        AllReduceModel model = AllReduceModel.fit(train);
        Map<String, List<double[]>> byDevice = new LinkedHashMap<>();
        Map<String, List<double[]>> byImplementation = new java.util.TreeMap<>();
        java.util.Set<String> trainImplementations = new java.util.TreeSet<>();
        train.forEach(m -> trainImplementations.add(m.implementation()));
        List<double[]> everything = new ArrayList<>();
        for (CollectiveMeasurement m : test) {
            double p = model.predictMillis(m.device(), m.topology(), m.nodes(), m.ranks(), m.ranks() / m.nodes(),
                    m.bytes());
            byDevice.computeIfAbsent(m.device(), k -> new ArrayList<>()).add(new double[] {p, m.millis()});
            byImplementation.computeIfAbsent(m.implementation().isEmpty() ? "unknown" : m.implementation(),
                    k -> new ArrayList<>()).add(new double[] {p, m.millis()});
            everything.add(new double[] {p, m.millis()});
        }
        Map<String, ErrorMetrics> metrics = new LinkedHashMap<>();
        byDevice.forEach((d, v) -> metrics.put(d, of(v)));
        Map<String, ErrorMetrics> byImpl = new LinkedHashMap<>();
        byImplementation.forEach((d, v) -> byImpl.put(d, of(v)));
        ErrorMetrics overall = of(everything);
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            root.put("train_rows", train.size());
            root.put("test_rows", test.size());
            root.put("heldout_mre", overall.mre());
            root.put("mre", overall.mre());
            root.put("network_efficiency", model.networkEfficiency());
            ObjectNode per = root.putObject("per_device");
            metrics.forEach((d, x) -> per.putObject(d).put("n", x.n()).put("mre", x.mre()).put("within10",
                    x.within10()));
            ObjectNode impl = root.putObject("per_implementation");
            byImpl.forEach((d, x) -> impl.putObject(d).put("n", x.n()).put("mre", x.mre())
                    .put("in_training", trainImplementations.contains(d)));
            Reports.printJson(root);
            return 0;
        }
        System.out.printf(Locale.ROOT, "fit on %d runs with <= %d ranks, predict %d larger runs%n", train.size(),
                maxRanks, test.size());
        System.out.printf(Locale.ROOT, "fitted network efficiency: %.2f of nominal%n", model.networkEfficiency());
        System.out.printf(Locale.ROOT, "%-16s %4s %8s %9s%n", "device", "n", "MRE", "within10");
        metrics.forEach((d, x) -> System.out.printf(Locale.ROOT, "%-16s %4d %7.1f%% %8.0f%%%n", d, x.n(),
                100 * x.mre(), 100 * x.within10()));
        System.out.printf(Locale.ROOT, "%-16s %4d %7.1f%% %8.0f%%%n", "all", overall.n(), 100 * overall.mre(),
                100 * overall.within10());
        System.out.println("by implementation (* = also among the training runs):");
        byImpl.forEach((d, x) -> System.out.printf(Locale.ROOT, "  %-22s %4d %7.1f%%%s%n", d, x.n(), 100 * x.mre(),
                trainImplementations.contains(d) ? " *" : ""));
        return 0;
    }

    private static ErrorMetrics of(List<double[]> pairs) {
        return ErrorMetrics.of(pairs.stream().mapToDouble(p -> p[0]).toArray(),
                pairs.stream().mapToDouble(p -> p[1]).toArray());
    }
}
