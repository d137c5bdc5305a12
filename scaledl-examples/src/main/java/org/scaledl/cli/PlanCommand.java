package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.scaledl.InvalidInputException;
import org.scaledl.doe.Design;
import org.scaledl.doe.FedorovExchange;
import org.scaledl.io.Candidates;
import org.scaledl.io.CsvTable;
import org.scaledl.io.DatasetReader;
import org.scaledl.model.plan.ProfilingCost;
import org.scaledl.model.plan.ProfilingPlan;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scaledl plan}: which runs to profile — a D-optimal subset (Fedorov exchange) of a given size, or within a
 * budget of profiling seconds (a GPU model's calibration on fewer than 8 runs of a given number: the candidates'
 * most representative, {@link ProfilingPlan#forCalibration}); {@code --out plan.csv} writes it for the Python
 * companion's {@code measure}.
 */
@Command(name = "plan", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = {"Choose which configurations to profile: a D-optimal subset (Fedorov exchange), of --runs "
                + "runs or within --budget-s seconds of measurement (with a GPU model, fewer than 8 --runs with "
                + "--fixed's calibrate one level: the candidates' most representative, k-medoids).",
                "Candidates: the rows of a dataset (--data), a candidate table (--candidates), a grid spec (--grid) "
                + "or a raw model matrix (--matrix). --fixed names what is already measured; --out writes plan.csv "
                + "(the runs.csv columns plus predicted_ms and cost_s; a GPU model's plan of jobs: the table's "
                + "columns plus predicted_ms and cost_gpu_hours) for 'python -m scaledl_profiler measure'."})
final class PlanCommand implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    static final class Source {
        @Option(names = "--data", description = "Dataset folder: candidates are the rows of its runs.csv")
        Path data;

        @Option(names = "--candidates", description = "Candidate table: the columns of runs.csv without the "
                + "measurements (graph, batch, world_size, threads, phase; model, resolution, family)")
        Path candidates;

        @Option(names = "--grid", description = "Grid spec: 'key = v1, v2' lines for model, resolution, batch, "
                + "threads, world_size, phase, graph (template), cores; see docs/formats.md")
        Path grid;

        @Option(names = "--matrix", description = "CSV of a raw model matrix: one candidate per line, no header")
        Path matrix;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Size size;

    static final class Size {
        @Option(names = "--runs", description = "How many runs to choose")
        Integer runs;

        @Option(names = "--budget-s", description = "Profiling budget in seconds: choose the D-optimal set whose "
                + "predicted measurement time fits it")
        Double budget;

        @Option(names = "--budget-gpu-hours", description = "Profiling budget of GPU jobs in GPU-hours (a run costs "
                + "its GPUs x (start-up + warm-up and timed iterations)): choose the D-optimal set that fits it")
        Double budgetGpuHours;
    }

    @Option(names = "--fixed", description = "runs.csv of workloads already measured: plan what to profile next")
    Path fixed;

    @Option(names = {"--prior", "--model"}, description = "Model (a bundled name or a file) whose predictions price "
            + "the candidates and whose calibration the plan serves (default: a roofline prior, good to a factor of a "
            + "few); a GPU model (gpu) plans runs of a cluster: candidates with transformer or graph, device and the "
            + "parallel columns, priced in GPU-hours")
    String prior;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--devices", description = "Extra device catalog CSV for the candidates' devices")
    Path devices;

    @picocli.CommandLine.Mixin
    ProfilingCostOptions costOptions;

    @Option(names = "--out", description = "Write the chosen runs here (plan.csv)")
    Path out;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the random starts (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    /** The columns of a candidate table that a plan keeps, in this order, where present. */
    private static final List<String> PLAN_COLUMNS = List.of("model", "family", "resolution", "batch", "world_size",
            "threads", "phase", "tensor", "pipeline", "micro_batches", "global_batch", "device", "graph");

    /** A workload's design row as text, where it has one (a job the model cannot predict has none). */
    private static java.util.Optional<String> rowKey(java.util.function.Function<Workload, double[]> rows,
            Workload w) {
        try {
            return java.util.Optional.of(java.util.Arrays.toString(rows.apply(w)));
        } catch (IllegalArgumentException | org.scaledl.InvalidInputException e) {
            return java.util.Optional.empty();
        }
    }

    /**
     * A table of GPU jobs (a row naming a {@code transformer}, or a {@code device} the GPU catalog knows; a CPU table's
     * {@code device} names its machine) priced by the roofline prior or a CPU model would be read as CPU runs: its
     * GPUs, layouts and precisions dropped and every job priced alike. Refused, naming the first such row.
     */
    private static void refuseGpuJobs(org.scaledl.io.CsvTable t, boolean cpuModel,
            java.util.function.Function<String, Optional<org.scaledl.workload.Device>> gpus) {
        for (int i = 0; i < t.size(); i++) {
            String transformer = t.opt(i, "transformer").orElse("");
            String device = t.opt(i, "device").orElse("");
            if (!transformer.isBlank() || !device.isBlank() && gpus.apply(device.strip()).isPresent()) {
                throw InvalidInputException.atLine(t.source(), t.line(i), "a GPU job (it names "
                        + (!transformer.isBlank() ? "a transformer" : "the GPU " + InvalidInputException.printable(
                        device, 60)) + "): " + (cpuModel ? "the given model predicts CPU runs" : "the roofline "
                        + "prior prices CPU runs") + "; give a GPU model (--model gpu), whose predictions price GPU "
                        + "jobs in GPU-hours");
            }
        }
    }

    @Override
    public Integer call() throws Exception {
        if (out != null) {
            org.scaledl.model.file.SafeFiles.checkWritable(out);
            Reports.requireExtension(out, "the plan", ".csv");
            Reports.notAnInput(out, "--data", source.data);
            Reports.notAnInput(out, "--candidates", source.candidates);
            Reports.notAnInput(out, "--grid", source.grid);
            Reports.notAnInput(out, "--matrix", source.matrix);
            Reports.notAnInput(out, "--fixed", fixed);
            Reports.notAnInput(out, "--devices", devices);
        }
        if (source.matrix != null) {
            return matrix();
        }
        // a refusal names the option as typed (--model is the documented spelling of a GPU plan)
        String typed = spec.commandLine().getParseResult().expandedArgs().stream()
                .anyMatch(a -> a.equals("--model") || a.startsWith("--model=")) ? "--model" : "--prior";
        RuntimePredictor priorModel = prior == null ? null : ModelArgument.load(typed, prior);
        boolean cluster = priorModel != null && priorModel.modelsClusters();
        if (size.budgetGpuHours != null && !cluster) {
            throw new IllegalArgumentException("--budget-gpu-hours prices GPU jobs: give a GPU model (--model gpu); "
                    + "plans of CPU runs take --budget-s");
        }
        if (size.budget != null && cluster) {
            throw new IllegalArgumentException("a GPU model's plan is priced in GPU-hours: give --budget-gpu-hours "
                    + "(or --runs)");
        }
        ProfilingCost cost = costOptions.cost(cluster);
        Candidates c;
        Path base;
        org.scaledl.io.DeviceCatalog catalog = Catalogs.of(devices);
        java.util.function.Function<String, Optional<org.scaledl.workload.Device>> devicesOf = cluster
                ? gpuNames(catalog) : name -> Optional.empty();
        if (source.data != null) {
            Path runsCsv = source.data.resolve("runs.csv");
            c = Candidates.read(runsCsv, OnnxImporter::read, devicesOf);
            base = source.data;
        } else if (source.candidates != null) {
            c = Candidates.read(source.candidates, OnnxImporter::read, devicesOf);
            base = source.candidates.toAbsolutePath().getParent();
        } else {
            c = Candidates.grid(source.grid, OnnxImporter::read);
            base = source.grid.toAbsolutePath().getParent();
        }
        List<Workload> candidates = c.workloads();
        if (source.grid == null) {
            refuseRepeatedRows(c.table(), cluster);
        }
        if (!cluster) {
            refuseGpuJobs(c.table(), priorModel != null, catalog::find);
        }
        // what is already measured: a GPU model's job runs table (as fit --calibrate --runs reads), else a CPU runs.csv
        List<Workload> measured = fixed == null ? List.of() : (cluster
                ? org.scaledl.io.JobRuns.read(fixed, OnnxImporter::read, devicesOf, java.util.Map.of())
                : DatasetReader.readRuns(fixed).samples()).stream().map(Sample::workload).toList();
        java.util.function.Function<Workload, double[]> designRow = priorModel == null
                ? org.scaledl.model.LayerCost.host()::designRow : priorModel::designRow;
        // each workload's row computed once: the check for measured candidates below and the plan both read them
        java.util.Map<Workload, double[]> rowOf = new java.util.IdentityHashMap<>();
        java.util.function.Function<Workload, double[]> rows = w -> rowOf.computeIfAbsent(w, designRow);
        // one GPU job written two ways (a device's alias, a precision's spelling, gpus for world_size, another id or
        // release) is one candidate: the same workload as read and the same design row; its repeats are left out
        java.util.Set<Integer> repeats = new java.util.TreeSet<>();
        if (source.grid == null && cluster) {
            java.util.Map<String, Integer> firstOf = new java.util.HashMap<>();
            List<String> said = new ArrayList<>();
            for (int i = 0; i < candidates.size(); i++) {
                Workload w = candidates.get(i);
                Integer j = firstOf.putIfAbsent(w + "|" + rowKey(rows, w).orElse(""), i);
                if (j != null) {
                    repeats.add(i);
                    said.add(c.table().line(i) + " (as " + c.table().line(j) + ")");
                }
            }
            if (!said.isEmpty()) {
                // said even with -q: the plan is chosen among fewer rows than the table has
                System.err.println("scaledl: warning: " + said.size() + " of " + candidates.size() + " candidates "
                        + "left out of the plan: the same job as an earlier line, written another way (lines "
                        + String.join(", ", said.subList(0, Math.min(5, said.size()))) + (said.size() > 5 ? ", ..."
                        : "") + ")");
            }
        }
        // a candidate already measured is not planned again (its run would add nothing a calibration has not got):
        // the same workload as printed, or the same design row: for a GPU model its execution terms (a job `runs`
        // read from a log names its own copy of the configuration, and states a gradient type the candidate leaves
        // at its default), for a CPU plan its layer features (the companion measures a copy of each graph, under
        // another path, into a data folder whose machine.json names the machine; a CPU plan's candidates name none)
        java.util.Set<String> done = new java.util.HashSet<>();
        java.util.Set<String> doneRows = new java.util.HashSet<>();
        measured.forEach(w -> {
            done.add(w.toString());
            rowKey(rows, w).ifPresent(doneRows::add);
        });
        int again = 0;
        double[] predictedMs = new double[candidates.size()];
        double[] costs = new double[candidates.size()];
        double gridSeconds = 0;
        // a GPU job predicted not to fit in its GPUs' memory is no run to plan: it would fail, not measure; nor is one
        // within 5 % of it (the estimate leaves out the allocator's fragmentation: a run that may not fit spends its
        // GPU-hours on nothing), unless no other is left
        List<Integer> runnable = new ArrayList<>();
        List<Integer> atEdge = new ArrayList<>();
        for (int i = 0; i < candidates.size(); i++) {
            Workload w = candidates.get(i);
            if (repeats.contains(i)) {
                continue;
            }
            if (done.contains(w.toString()) || !doneRows.isEmpty() && rowKey(rows, w).map(doneRows::contains)
                    .orElse(false)) {
                again++;
                continue;
            }
            boolean fits = true;
            boolean edge = false;
            try {
                if (priorModel == null) {
                    predictedMs[i] = ProfilingCost.rooflineMillis(w);
                } else if (cluster) {
                    org.scaledl.model.Prediction pr = priorModel.predict(w);
                    predictedMs[i] = pr.millis();
                    fits = !pr.outOfMemory();
                    edge = fits && pr.memoryGb().isPresent() && w.device().isPresent()
                            && org.scaledl.model.RuntimePredictor.nearMemoryEdge(pr.memoryGb().getAsDouble(),
                                    w.device().get().memoryGB());
                } else {
                    predictedMs[i] = priorModel.predictMillis(w);
                }
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.atLine(c.table().source(), c.table().line(i), "the prior cannot price "
                        + "this candidate: " + e.getMessage());
            }
            costs[i] = cost.seconds(predictedMs[i]) * (cluster ? w.parallelism().ranks() / 3600.0 : 1);
            if (edge) {
                atEdge.add(i);
            } else if (fits) {
                runnable.add(i);
                gridSeconds += costs[i];
            }
        }
        if (!atEdge.isEmpty() && (runnable.isEmpty() || size.runs != null && size.runs > runnable.size())) {
            // too few jobs leave the memory's margin for the plan asked for: those at the edge are offered too, said
            System.err.printf(Locale.ROOT, "scaledl: warning: %s: the plan is chosen among them too, and a run may "
                    + "not fit%n", runnable.isEmpty() ? String.format(Locale.ROOT, "every candidate job that fits is "
                    + "predicted within %.0f %% of its GPUs' memory", 100 * org.scaledl.model.RuntimePredictor
                    .MEMORY_EDGE) : String.format(Locale.ROOT, "%d of the candidate jobs that fit leave %.0f %% of "
                    + "their GPUs' memory free, fewer than --runs %d; %d %s predicted within it", runnable.size(),
                    100 * org.scaledl.model.RuntimePredictor.MEMORY_EDGE, size.runs, atEdge.size(),
                    atEdge.size() == 1 ? "is" : "are"));
            for (int i : atEdge) {
                runnable.add(i);
                gridSeconds += costs[i];
            }
            runnable.sort(null);
        } else if (!atEdge.isEmpty()) {
            // said even with -q: the plan is chosen among fewer rows than the table has
            System.err.printf(Locale.ROOT, "scaledl: warning: %d of %d candidate jobs left out of the plan: predicted "
                    + "within %.0f %% of their GPUs' memory, so they may not fit (the estimate leaves out the "
                    + "allocator's fragmentation; predict --candidates shows each one's memory_gb)%n", atEdge.size(),
                    candidates.size(), 100 * org.scaledl.model.RuntimePredictor.MEMORY_EDGE);
        }
        boolean edgeLeftOut = !atEdge.isEmpty() && !runnable.contains(atEdge.get(0));
        int outOfMemory = candidates.size() - repeats.size() - again - runnable.size() - (edgeLeftOut ? atEdge.size()
                : 0);
        if (runnable.isEmpty() && again == candidates.size() - repeats.size()) {
            throw InvalidInputException.of(c.table().source() + ": every candidate is already measured in "
                    + InvalidInputException.escaped(fixed.toString()) + ": nothing to plan");
        }
        if (again > 0) {
            // said even with -q: the plan is chosen among fewer rows than the table has
            System.err.printf(Locale.ROOT, "scaledl: warning: %d of %d candidates left out of the plan: already "
                    + "measured in %s%n", again, candidates.size(), InvalidInputException.escaped(fixed.toString()));
        }
        if (runnable.isEmpty()) {
            throw InvalidInputException.of(c.table().source() + (candidates.size() == 1 ? ": its one candidate job "
                    + "does not fit" : ": none of its " + candidates.size() + " candidate jobs fits") + " in its GPUs' "
                    + "memory (predicted out of memory: predict --candidates shows memory_gb): nothing to plan");
        }
        if (outOfMemory > 0) {
            // said even with -q: the plan is chosen among fewer rows than the table has
            System.err.printf(Locale.ROOT, "scaledl: warning: %d of %d candidate jobs left out of the plan: predicted "
                    + "not to fit in their GPUs' memory (out_of_memory; predict --candidates shows each one's "
                    + "memory_gb)%n", outOfMemory, candidates.size());
        }
        List<Workload> offered = runnable.stream().map(candidates::get).toList();
        double[] offeredCosts = runnable.stream().mapToDouble(i -> costs[i]).toArray();
        ProfilingPlan plan;
        if (size.runs != null) {
            int most = offered.size() + (edgeLeftOut ? atEdge.size() : 0);
            if (size.runs < 1 || size.runs > most) {
                List<String> which = new ArrayList<>();
                if (again > 0) {
                    which.add("not yet measured");
                }
                if (outOfMemory > 0) {
                    which.add("that fit in memory");
                }
                throw new IllegalArgumentException("--runs must be in 1.." + most + " (the "
                        + (repeats.isEmpty() ? "" : "distinct ") + "candidates" + (which.isEmpty() ? "" : " "
                        + String.join(" and ", which)) + "), got " + size.runs);
            }
            // a cluster's few runs calibrate its level: those most like the candidates (else D-optimal)
            plan = cluster ? ProfilingPlan.forCalibration(offered, measured, size.runs, seed, rows)
                    : ProfilingPlan.choose(offered, measured, size.runs, seed, rows);
        } else {
            double budget = cluster ? size.budgetGpuHours : size.budget;
            if (!(budget > 0 && Double.isFinite(budget))) {
                throw new IllegalArgumentException((cluster ? "--budget-gpu-hours" : "--budget-s") + " must be a "
                        + "positive number, got " + budget);
            }
            try {
                plan = ProfilingPlan.withinBudget(offered, measured, offeredCosts, budget, seed, rows);
            } catch (IllegalArgumentException e) {
                if (e.getMessage() == null || !e.getMessage().startsWith("budget ")) {
                    throw e;
                }
                // the design's words for the budget: the option it came from, and its unit
                throw new IllegalArgumentException((cluster ? "--budget-gpu-hours " : "--budget-s ")
                        + CsvTable.plain(budget) + (cluster ? " GPU-hours" : " s of profiling") + " "
                        + e.getMessage().replaceFirst("^budget \\S+ ", ""), e);
            }
        }
        // the plan's rows as the table's
        plan = new ProfilingPlan(plan.indices().stream().map(runnable::get).toList(), plan.chosen(), plan.logDet(),
                plan.dEfficiency());
        double seconds = plan.indices().stream().mapToDouble(i -> costs[i]).sum();
        if (out != null) {
            // a job whose recomputation the table left to the predictor is measured as the prediction decided it
            java.util.Map<Integer, Workload> decided = new java.util.HashMap<>();
            if (cluster) {
                for (int i : plan.indices()) {
                    if (candidates.get(i).recompute() == org.scaledl.workload.Recompute.AUTO) {
                        decided.put(i, priorModel.resolved(candidates.get(i)));
                    }
                }
            }
            writePlan(c, plan, predictedMs, costs, base, out, cluster, decided);
        }
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ArrayNode a = root.putArray("chosen");
            plan.indices().forEach(a::add);
            root.put("runs", plan.indices().size());
            // a cluster's runs are priced in GPU-hours: the seconds keys say GPU-seconds, and the hours are given too
            root.put("seconds", cluster ? seconds * 3600 : seconds);
            root.put("grid_seconds", cluster ? gridSeconds * 3600 : gridSeconds);
            if (cluster) {
                root.put("gpu_hours", seconds);
                root.put("grid_gpu_hours", gridSeconds);
            }
            root.put("candidates", candidates.size());
            root.put("out_of_memory", outOfMemory);
            root.put("near_memory_limit", edgeLeftOut ? atEdge.size() : 0);
            // the chosen jobs at the memory's edge, where too few others were left to choose from
            ArrayNode edgeChosen = root.putArray("chosen_near_memory_limit");
            plan.indices().stream().filter(atEdge::contains).forEach(edgeChosen::add);
            root.put("already_measured", again);
            root.put("repeated", repeats.size());
            root.put("prior", priorModel == null ? "roofline" : prior);
            root.put("logdet", plan.logDet());
            Reports.number(root, "d_efficiency", dEfficiency(plan.dEfficiency(), plan.indices().size()
                    + measured.size(), rows.apply(candidates.get(0)).length));
            System.out.println(Reports.compact(root));
        } else {
            if (cluster) {
                System.out.printf(Locale.ROOT, "chose %d of %d %scandidate jobs%s: about %.1f GPU-hours of runs "
                        + "(%.1f%% of all %s %.1f; each run %.0f s start-up, %d + %d iterations)%n",
                        plan.indices().size(), offered.size(), repeats.isEmpty() ? "" : "distinct ",
                        outOfMemory > 0 || edgeLeftOut ? " that fit in memory" : "", seconds,
                        100 * seconds / gridSeconds, outOfMemory > 0 || edgeLeftOut ? "their" : "candidates'",
                        gridSeconds,
                        cost.overheadSeconds(), cost.warmupIterations(), cost.timedIterations());
            } else {
                System.out.printf(Locale.ROOT, "chose %d of %d candidates: about %.0f s of profiling (%.1f%% of the "
                        + "grid's %.0f s; %s prior)%n", plan.indices().size(), candidates.size(), seconds,
                        100 * seconds / gridSeconds, gridSeconds, priorModel == null ? "roofline" : "model");
            }
            List<Integer> edgeChosen = plan.indices().stream().filter(atEdge::contains).toList();
            if (!edgeChosen.isEmpty()) {
                System.out.printf(Locale.ROOT, "chosen within %.0f %% of their GPUs' memory (a run may not fit): %s%n",
                        100 * org.scaledl.model.RuntimePredictor.MEMORY_EDGE, edgeChosen);
            }
            System.out.printf(Locale.ROOT, "chosen rows (0-based): %s%s%nlog det: %.6f%s%n%s%n", plan.indices(),
                    source.grid == null ? ": " + chosenLines(c.table(), plan.indices()) : "", plan.logDet(),
                    LOG_DET_MEANING, dEfficiencyLine(plan.dEfficiency(), plan.indices().size() + measured.size(),
                            rows.apply(candidates.get(0)).length));
            int calibrating = (int) org.scaledl.model.plan.ProfilingPlan.calibrationJobs(plan.indices().size(),
                    measured);
            if (cluster && calibrating < org.scaledl.model.exec.MegatronFit.TERM_RUNS) {
                System.out.printf(Locale.ROOT, "%d run%s calibrate%s one level (the cluster's speed over every term)%s; "
                        + "%d or more refit the execution terms too, where that predicts them held out better, and are "
                        + "planned D-optimally%n", calibrating, calibrating == 1 ? "" : "s",
                        calibrating == 1 ? "s" : "", size.runs != null ? ", so the plan chose the candidates' most "
                        + "representative (not a D-optimal plan's extremes)" : "",
                        org.scaledl.model.exec.MegatronFit.TERM_RUNS);
                if (calibrating < 3) {
                    // measured on the published clusters (docs/results.md, round twenty-seven): a system held out
                    // whole, 7.9 % before any run, 7.7 % after one planned run, 7.6 % after three
                    System.out.printf(Locale.ROOT, "one or two runs set the level by themselves: on the published "
                            + "clusters one planned run moved a new system's predictions little, three more "
                            + "(docs/results.md: evaluate-clusters --calibration); plan --runs 3 or more%n");
                }
            }
            if (out != null) {
                System.out.println(cluster ? "wrote " + out + " (run these jobs, add measured_ms to each row, and "
                        + "calibrate: scaledl fit --calibrate " + prior + " --runs RUNS.csv --out mine.sdl)"
                        : "wrote " + out + " (measure it: python -m scaledl_profiler measure " + out + " --out DIR)");
            }
        }
        return 0;
    }

    /** Resolves a candidate's GPU in a catalog; a row without one is refused (at its line, by the reader). */
    static java.util.function.Function<String, Optional<org.scaledl.workload.Device>> gpuNames(
            org.scaledl.io.DeviceCatalog catalog) {
        return name -> {
            if (name.isEmpty()) {
                throw new IllegalArgumentException("a GPU model's candidates need a device column (the GPU of each "
                        + "job)");
            }
            try {
                org.scaledl.workload.Device d = catalog.require(name);
                Catalogs.sayAlsoFitting(catalog, "the device", name, d);
                return Optional.of(d);
            } catch (InvalidInputException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        };
    }

    /** The D-efficiency as reported: NaN (JSON null, "none") with fewer runs than design columns. */
    static double dEfficiency(double dEfficiency, int runs, int columns) {
        return runs < columns ? Double.NaN : dEfficiency;
    }

    /**
     * The D-efficiency as printed: with fewer runs than the design has columns, XᵀX is singular and the efficiency
     * is 0 whatever the choice, so no figure is printed, only why (the runs were chosen on XᵀX plus a small ridge;
     * the figure the ridge gives then compares nothing).
     */
    static String dEfficiencyLine(double dEfficiency, int runs, int columns) {
        if (runs >= columns && Double.isNaN(dEfficiency)) {
            // (FedorovExchange measures it on the directions the candidates can estimate: none is left)
            return "D-efficiency: none (every design column of the candidates is zero: there is nothing to estimate, "
                    + "and every choice is as good)";
        }
        if (Double.isNaN(dEfficiency(dEfficiency, runs, columns))) {
            return String.format(Locale.ROOT, "D-efficiency: none (%d run%s for %d design columns: fewer runs than "
                    + "columns leave XᵀX singular, 0 for any choice; the runs were chosen on XᵀX plus a small ridge, "
                    + "and %d or more runs give a figure)", runs, runs == 1 ? "" : "s", columns, columns);
        }
        return String.format(Locale.ROOT, "D-efficiency: %.4f", dEfficiency);
    }

    private int matrix() throws Exception {
        if (size.runs == null) {
            throw new IllegalArgumentException("--budget-s needs workloads to price (--data, --candidates or --grid),"
                    + " not a raw --matrix");
        }
        if (fixed != null || out != null || prior != null || devices != null) {
            throw new IllegalArgumentException("--fixed, --prior, --out and --devices need workloads (--data, "
                    + "--candidates or --grid), not a raw --matrix");
        }
        if (costOptions.overhead != null || costOptions.warmup != null || costOptions.reps != null) {
            throw new IllegalArgumentException("--overhead-s, --warmup and --reps price runs; the rows of a raw "
                    + "--matrix are not runs (give --data, --candidates or --grid to price them)");
        }
        double[][] x = readMatrix(source.matrix);
        if (size.runs < 1 || size.runs > x.length) {
            throw new IllegalArgumentException("--runs must be in 1.." + x.length + " (the matrix's rows), got "
                    + size.runs);
        }
        Design d = new FedorovExchange(x, size.runs).seed(seed).design();
        if (json) {
            ObjectMapper om = new ObjectMapper();
            ObjectNode root = om.createObjectNode();
            ArrayNode a = root.putArray("chosen");
            d.chosen().forEach(a::add);
            root.put("runs", d.chosen().size());
            root.put("logdet", d.logDet());
            Reports.number(root, "d_efficiency", dEfficiency(d.dEfficiency(), d.chosen().size(), x[0].length));
            System.out.println(Reports.compact(root));
        } else {
            System.out.printf(Locale.ROOT, "chosen rows (0-based): %s%nlog det: %.6f%s%n%s%n", d.chosen(), d.logDet(),
                    LOG_DET_MEANING, dEfficiencyLine(d.dEfficiency(), d.chosen().size(), x[0].length));
        }
        return 0;
    }

    /** What the design's log determinant tells a reader. */
    static final String LOG_DET_MEANING = " (log det(X'X) of the chosen runs' terms: larger is more informative; "
            + "comparable between plans of one table only)";

    /** The chosen rows as the table's lines, each with its id where the table names one. */
    static String chosenLines(CsvTable t, List<Integer> rows) {
        List<String> out = new ArrayList<>();
        for (int i : rows.subList(0, Math.min(rows.size(), MAX_LINES_SHOWN))) {
            out.add("line " + t.line(i) + t.opt(i, "id").filter(v -> !v.isBlank())
                    .map(v -> " (id " + InvalidInputException.printable(v, 60) + ")").orElse(""));
        }
        return String.join(", ", out) + (rows.size() > MAX_LINES_SHOWN ? ", ..." : "");
    }

    /**
     * The columns of a job's recomputation ({@link Workload#recomputeCells}), written as the prediction decided it
     * where the table left it.
     */
    private static final List<String> DECIDED_COLUMNS = List.copyOf(Workload.recomputeCells(
            org.scaledl.workload.Recompute.NONE, 0, java.util.Set.of(), 0).keySet());

    /** The chosen lines the text output names (the plan's file has them all). */
    static final int MAX_LINES_SHOWN = 10;

    /**
     * The chosen rows: for a CPU plan the identity columns the companion measures, for a cluster plan every input
     * column (an {@code id} the user matches the measurements by among them); graph and transformer paths relative to
     * the plan's folder; then {@code predicted_ms} and {@code cost_s} or {@code cost_gpu_hours}. A cluster job whose
     * recomputation the table left to the predictor ({@code decided}: the job as predicted) has it written as decided
     * ({@code recompute}, {@code recompute_layers}, {@code recompute_modules}, {@code offload_layers}): measured
     * without it, the job may not fit.
     */
    private static void writePlan(Candidates c, ProfilingPlan plan, double[] predictedMs, double[] costs, Path base,
            Path out, boolean cluster, java.util.Map<Integer, Workload> decided) {
        CsvTable t = c.table();
        List<String> cols = new ArrayList<>(cluster ? t.columns().stream().filter(x -> !x.equals("predicted_ms")
                && !x.equals("cost_gpu_hours") && !PredictCommand.OUTPUT_COLUMNS.contains(x)).toList()
                : PLAN_COLUMNS.stream().filter(t::has).toList());
        if (!decided.isEmpty()) {
            for (String col : DECIDED_COLUMNS) {
                if (!cols.contains(col)) {
                    cols.add(col);
                }
            }
        }
        Path outDir = out.toAbsolutePath().normalize().getParent();
        // a cluster plan is read back as a job runs table (fit --calibrate --runs) or a candidate table, which name
        // files inside their folder only: a configuration outside the plan's is copied beside it
        TableConfigs configs = new TableConfigs(out);
        for (int i : cluster && t.has("graph") ? plan.indices() : List.<Integer>of()) {
            String v = t.get(i, "graph");
            if (!v.isEmpty() && !base.toAbsolutePath().resolve(v).normalize().startsWith(outDir)) {
                throw new IllegalArgumentException("--out " + InvalidInputException.escaped(out.toString()) + ": the "
                        + "plan would name the graph " + InvalidInputException.escaped(v) + " (" + t.source() + ":"
                        + t.line(i) + ") outside its folder, which a candidate or job runs table may not: write the "
                        + "plan where the graphs are");
            }
        }
        StringBuilder sb = new StringBuilder(String.join(",", cols.stream().map(CsvTable::cell).toList()))
                .append(cluster ? ",predicted_ms,cost_gpu_hours\n" : ",predicted_ms,cost_s\n");
        for (int i : plan.indices()) {
            Workload w = decided.get(i);
            for (String col : cols) {
                String v = w != null && DECIDED_COLUMNS.contains(col) ? Workload.recomputeCells(w.recompute(),
                        w.recomputeLayers(), w.recomputeModules(), w.offloadLayers()).get(col)
                        : t.has(col) ? t.get(i, col) : "";
                if ((col.equals("graph") || col.equals("transformer")) && !v.isEmpty()) {
                    Path file = base.toAbsolutePath().resolve(v).normalize();
                    v = cluster && col.equals("transformer") ? configs.cell(file)
                            : outDir.relativize(file).toString().replace('\\', '/');
                }
                sb.append(CsvTable.cell(v)).append(',');
            }
            sb.append(String.format(Locale.ROOT, cluster ? "%.3f,%.4f%n" : "%.3f,%.3f%n", predictedMs[i], costs[i]));
        }
        Reports.write(out, sb.toString());
        if (!decided.isEmpty()) {
            System.err.println("scaledl: note: " + decided.size() + " of the chosen jobs left their recomputation to "
                    + "the predictor: the plan writes it as decided (" + String.join(", ", DECIDED_COLUMNS)
                    + "), so measure them so (without it a job may not fit)");
        }
        List<Path> copies = configs.copies();
        if (!copies.isEmpty()) {
            System.err.println("scaledl: note: " + copies.size() + (copies.size() == 1 ? " configuration" : " "
                    + "configurations") + " outside the plan's folder copied beside it (a table names files inside "
                    + "its folder only): " + copies.stream().map(x -> InvalidInputException.escaped(outDir.relativize(x)
                    .toString())).collect(java.util.stream.Collectors.joining(", ")));
        }
    }

    static double[][] readMatrix(Path file) {
        List<String> lines = CsvTable.readLines(file);
        List<double[]> rows = new ArrayList<>();
        int width = -1;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (width >= 0 && f.length != width) {
                throw InvalidInputException.atLine(file.toString(), i + 1, "has " + f.length + " values, expected "
                        + width);
            }
            width = f.length;
            double[] r = new double[width];
            for (int j = 0; j < width; j++) {
                try {
                    r[j] = org.scaledl.io.CsvTable.parseNumber(f[j]);
                } catch (NumberFormatException e) {
                    throw InvalidInputException.atLine(file.toString(), i + 1, "not a number: '" + f[j] + "'");
                }
                if (!Double.isFinite(r[j])) {
                    throw InvalidInputException.atLine(file.toString(), i + 1, "non-finite value in column " + (j + 1));
                }
                if (Math.abs(r[j]) > FedorovExchange.MAX_VALUE) {
                    // the information matrix's products would overflow: no determinant, no design
                    throw InvalidInputException.atLine(file.toString(), i + 1, "column " + (j + 1) + " holds " + r[j]
                            + ", beyond the " + FedorovExchange.MAX_VALUE + " a design can take: rescale the columns");
                }
            }
            rows.add(r);
        }
        if (rows.isEmpty()) {
            throw InvalidInputException.inSource(file.toString(), "no rows");
        }
        return rows.toArray(new double[0][]);
    }

    /**
     * A candidate table or dataset without rows, or whose row repeats an earlier one field for field, is refused
     * naming both lines: the copy would be priced twice in the grid's time and could be chosen twice.
     */
    static void refuseRepeatedRows(CsvTable t, boolean runsTable) {
        if (t.size() == 0) {
            throw InvalidInputException.inSource(t.source(), "no candidate rows (a header and no rows)");
        }
        t.repeatedRow().ifPresent(lines -> {
            throw InvalidInputException.atLine(t.source(), lines[0], "the same candidate as line " + lines[1]
                    + " (each candidate once)");
        });
        if (runsTable && t.has("id")) {
            // a cluster plan's rows become a runs table, whose reader refuses an id naming two runs: said here first
            java.util.Map<String, Integer> ids = new java.util.HashMap<>();
            for (int r = 0; r < t.size(); r++) {
                Optional<String> id = t.opt(r, "id").filter(v -> !v.isBlank());
                Integer first = id.isEmpty() ? null : ids.putIfAbsent(id.get(), t.line(r));
                if (first != null) {
                    throw InvalidInputException.atLine(t.source(), t.line(r), "id '" + InvalidInputException
                            .printable(id.get(), 60) + "' names the candidate of line " + first + " too: give each "
                            + "its own id (the measured plan is a runs table, where an id names one run)");
                }
            }
        }
    }
}
