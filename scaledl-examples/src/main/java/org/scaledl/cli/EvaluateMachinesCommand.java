package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.eval.MachineTransfer;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Dataset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl evaluate-machines --a DIR --b DIR}: few-shot adaptation between two machines, both directions. */
@Command(name = "evaluate-machines", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Few-shot machine adaptation: fit on one machine's dataset, calibrate with k runs of the other, "
                + "score the other's unmeasured families; both directions.")
final class EvaluateMachinesCommand implements Callable<Integer> {
    @Option(names = "--a", defaultValue = "datasets/cpu-ddp", description = "One machine's dataset (default "
            + "${DEFAULT-VALUE})")
    Path a;

    @Option(names = "--b", defaultValue = "datasets/cpu-zoo", description = "The other's (default ${DEFAULT-VALUE})")
    Path b;

    @Option(names = "--k", split = ",", defaultValue = "0,3,10,30", description = "Runs of the target measured "
            + "(default ${DEFAULT-VALUE})")
    List<Integer> ks;

    @Option(names = "--repeats", defaultValue = "5", description = "Random choices of the k runs (default "
            + "${DEFAULT-VALUE})")
    int repeats;

    @Option(names = "--seed", defaultValue = "7", description = "Seed of the choices (default 7)")
    long seed;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (java.nio.file.Files.isDirectory(a) && Reports.sameFile(a, b)) {
            throw new IllegalArgumentException("--b " + org.scaledl.InvalidInputException.escaped(b.toString())
                    + " is the --a folder: a machine adapted to itself measures nothing (give two machines' datasets)");
        }
        if (repeats < 1 || repeats > MachineTransfer.MAX_REPEATS) {
            throw new IllegalArgumentException("--repeats must be in 1.." + MachineTransfer.MAX_REPEATS + ", got "
                    + repeats);
        }
        Dataset da = DatasetReader.read(a);
        Dataset db = DatasetReader.read(b);
        String ma = checkMachine(a, da);
        String mb = checkMachine(b, db);
        // one machine's runs in two folders: the transfer would be scored on the runs it started from
        if (Reports.runsOf(db.samples(), da.samples()) == db.size()) {
            throw new IllegalArgumentException("every run of --b " + org.scaledl.InvalidInputException.escaped(
                    b.toString()) + " is a run of --a (the same job, machine and measured time): a machine adapted to "
                    + "itself measures nothing (give two machines' datasets)");
        }
        if (ma.equals(mb)) {
            // one machine's name in both: adapted to itself, the transfer measures nothing
            throw org.scaledl.InvalidInputException.inSource(b.toString(), "its machine, " + org.scaledl
                    .InvalidInputException.printable(mb, 60) + ", is --a's too: a machine adapted to itself measures "
                    + "nothing (give two machines' datasets, each named by its machine.json)");
        }
        int[] k = ks.stream().mapToInt(Integer::intValue).toArray();
        // both directions' k checked before the first fit: a k one target takes may be too many for the other
        try {
            MachineTransfer.checkKs(db.samples(), k);
            MachineTransfer.checkKs(da.samples(), k);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--k: " + e.getMessage());
        }
        Progress progress = Progress.of("evaluate-machines", Main.quiet);
        MachineTransfer.Report ab = MachineTransfer.run(da.samples(), db.samples(), k, repeats, seed,
                (m, f, d, t) -> progress.update(d, 2 * t, m + " " + f));
        int offset = 2 + k.length * repeats;
        MachineTransfer.Report ba = MachineTransfer.run(db.samples(), da.samples(), k, repeats, seed,
                (m, f, d, t) -> progress.update(offset + d, 2 * t, m + " " + f));
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ArrayNode dirs = root.putArray("directions");
            for (MachineTransfer.Report r : List.of(ab, ba)) {
                ObjectNode o = dirs.addObject();
                o.put("source", r.source());
                o.put("target", r.target());
                o.put("reference_mre", r.referenceMre());
                ArrayNode pts = o.putArray("points");
                for (MachineTransfer.Point p : r.points()) {
                    ObjectNode pt = pts.addObject().put("k", p.k()).put("choices", p.choices());
                    Reports.number(pt, "mre", p.mre());
                    Reports.number(pt, "mre_sd", p.mreSd());
                    Reports.number(pt, "scored", p.scored());
                    Reports.number(pt, "mre_before", p.mreBefore());
                    Reports.number(pt, "reference_mre_same_runs", p.referenceMre());
                }
            }
            Reports.printJson(root);
            return 0;
        }
        for (MachineTransfer.Report r : List.of(ab, ba)) {
            System.out.printf(Locale.ROOT, "%s -> %s (target fitted on its own data, leave-one-family-out: MRE "
                    + "%.1f%%)%n", r.source(), r.target(), 100 * r.referenceMre());
            for (MachineTransfer.Point p : r.points()) {
                int drawn = p.k() == 0 ? 1 : repeats;
                if (Double.isNaN(p.mre())) {
                    System.out.printf(Locale.ROOT, "  k = %3d runs: n/a (each of %d choices measured a run of every "
                            + "family: none left to score)%n", p.k(), drawn);
                    continue;
                }
                System.out.printf(Locale.ROOT, "  k = %3d runs: MRE %5.1f%% (sd %.1f over %s) on %.0f runs of "
                        + "unmeasured families; the same runs: %.1f%% before adapting, %.1f%% by the target's own "
                        + "model (%.2fx)%n", p.k(), 100 * p.mre(), 100 * p.mreSd(), p.choices() == drawn
                        ? drawn + (drawn == 1 ? " choice" : " choices") : p.choices() + " of " + drawn + " choices; "
                        + (drawn - p.choices()) + " measured every family",
                        p.scored(), 100 * p.mreBefore(), 100 * p.referenceMre(), p.mre() / p.referenceMre());
            }
        }
        return 0;
    }

    /**
     * Refuses a machine's dataset the experiment cannot score: runs of no named machine or of several, or too few
     * families for its own model to be scored with each held out (two families, two runs or more outside the
     * largest); gives its machine's name.
     */
    private static String checkMachine(Path folder, Dataset d) {
        java.util.Map<String, Long> families = d.samples().stream().collect(java.util.stream.Collectors.groupingBy(
                s -> s.workload().tag("family").orElse(""), java.util.TreeMap::new,
                java.util.stream.Collectors.counting()));
        long outside = d.samples().size() - families.values().stream().mapToLong(Long::longValue).max().orElse(0);
        if (families.size() < 2 || outside < 2) {
            throw org.scaledl.InvalidInputException.inSource(folder.toString(), "runs of " + families.size()
                    + " model famil" + (families.size() == 1 ? "y" : "ies") + ", " + outside + " outside the largest: "
                    + "evaluate-machines scores each machine's own model with each family held out (fitted on 2 runs "
                    + "or more of the others) and the adapted one on the families its k runs leave unmeasured");
        }
        if (d.samples().stream().anyMatch(s -> s.workload().device().isEmpty())) {
            throw org.scaledl.InvalidInputException.inSource(folder.toString(), "its runs name no machine: "
                    + "evaluate-machines adapts one machine's model to another's, named by each dataset's "
                    + "machine.json (or a device column)");
        }
        java.util.Set<String> machines = d.samples().stream().map(s -> s.workload().device().get().name())
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
        if (machines.size() > 1) {
            // scored as one machine, a mixed folder's transfer was labelled with the first and scored on all
            throw org.scaledl.InvalidInputException.inSource(folder.toString(), "its runs name " + machines.size()
                    + " machines (" + String.join(", ", machines.stream().limit(3).map(n -> org.scaledl
                    .InvalidInputException.printable(n, 40)).toList()) + "): evaluate-machines takes one machine's "
                    + "dataset on each side");
        }
        return machines.iterator().next();
    }
}
