package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.InvalidInputException;
import org.scaledl.doe.Design;
import org.scaledl.doe.FedorovExchange;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.ProfilingPlan;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl plan}: which runs to profile (D-optimal, Fedorov exchange). */
@Command(name = "plan", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Choose which configurations to profile: a D-optimal subset (Fedorov exchange).")
final class PlanCommand implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    static final class Source {
        @Option(names = "--data", description = "Dataset folder: candidates are the rows of its runs.csv")
        Path data;

        @Option(names = "--matrix", description = "CSV of a raw model matrix: one candidate per line, no header")
        Path matrix;
    }

    @Option(names = "--runs", required = true, description = "How many runs to choose")
    int runs;

    @Option(names = "--fixed", description = "runs.csv of workloads already measured (with --data)")
    Path fixed;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the random starts (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<Integer> chosen;
        double logDet;
        double eff;
        if (source.matrix != null) {
            double[][] x = readMatrix(source.matrix);
            if (runs < 1 || runs > x.length) {
                throw new IllegalArgumentException("--runs must be in 1.." + x.length + ", got " + runs);
            }
            Design d = new FedorovExchange(x, runs).seed(seed).design();
            chosen = d.chosen();
            logDet = d.logDet();
            eff = d.dEfficiency();
        } else {
            Dataset data = DatasetReader.read(source.data);
            List<Workload> candidates = data.samples().stream().map(Sample::workload).toList();
            List<Workload> measured = fixed == null ? List.of()
                    : DatasetReader.readRuns(fixed).samples().stream().map(Sample::workload).toList();
            if (runs < 1 || runs > candidates.size()) {
                throw new IllegalArgumentException("--runs must be in 1.." + candidates.size() + ", got " + runs);
            }
            ProfilingPlan plan = ProfilingPlan.choose(candidates, measured, runs, seed);
            chosen = plan.indices();
            logDet = plan.logDet();
            eff = plan.dEfficiency();
        }
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ArrayNode a = root.putArray("chosen");
            chosen.forEach(a::add);
            root.put("logdet", logDet);
            Reports.number(root, "d_efficiency", eff);
            System.out.println(om.writeValueAsString(root));
        } else {
            System.out.printf(Locale.ROOT, "chosen rows (0-based): %s%nlog det: %.6f%nD-efficiency: %.4f%n", chosen,
                    logDet, eff);
        }
        return 0;
    }

    static double[][] readMatrix(Path file) throws java.io.IOException {
        List<String> lines = Files.readAllLines(file);
        List<double[]> rows = new ArrayList<>();
        int width = -1;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(",");
            if (width >= 0 && f.length != width) {
                throw InvalidInputException.atLine(file.toString(), i + 1, "has " + f.length + " values, expected "
                        + width);
            }
            width = f.length;
            double[] r = new double[width];
            for (int j = 0; j < width; j++) {
                try {
                    r[j] = Double.parseDouble(f[j].trim());
                } catch (NumberFormatException e) {
                    throw InvalidInputException.atLine(file.toString(), i + 1, "not a number: '" + f[j] + "'");
                }
                if (!Double.isFinite(r[j])) {
                    throw InvalidInputException.atLine(file.toString(), i + 1, "non-finite value");
                }
            }
            rows.add(r);
        }
        if (rows.isEmpty()) {
            throw InvalidInputException.inSource(file.toString(), "no rows");
        }
        return rows.toArray(new double[0][]);
    }
}
