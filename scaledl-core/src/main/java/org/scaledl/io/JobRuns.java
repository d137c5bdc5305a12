package org.scaledl.io;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.Device;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * Measured runs of a user's cluster (or published ones), as a <b>job runs table</b>: the columns of a candidate table
 * ({@link Candidates}: {@code transformer} or {@code graph}, {@code seq}, {@code batch}, {@code micro_batches},
 * {@code world_size}, {@code tensor}, {@code pipeline}, {@code context}, {@code virtual_stages}, {@code expert},
 * {@code zero_stage}, {@code device}, {@code precision}, ...) plus the measurement: {@code measured_ms} (one training
 * iteration, ms) or {@code tokens_per_s_per_gpu} (then the iteration's tokens over that rate and the GPUs). Columns
 * {@code id}, {@code release}, {@code system}, {@code model_key}, {@code task} and {@code fit_weight} (repeated
 * publications of one configuration share one measurement) are kept as the runs' tags, {@code source} as
 * {@value #PUBLICATION_TAG}; tag {@code source} says where each row was read ({@code runs.csv:12}).
 *
 * <pre>{@code
 * // a row without a device takes the default's ("device" -> "H100"); a name the catalog lacks is refused at its line
 * List<Sample> runs = JobRuns.read(Path.of("runs.csv"), OnnxImporter::read,
 *         name -> name.isEmpty() ? Optional.empty() : Optional.of(catalog.require(name)), Map.of("device", "H100"));
 * }</pre>
 */
public final class JobRuns {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobRuns.class);
    /** The columns a row's measurement may be in, by preference. */
    public static final List<String> MEASURED = List.of("measured_ms", "tokens_per_s_per_gpu");
    /** The prefix a scored table's measured throughput columns carry (as {@link #SCORED_RATE}). */
    public static final String MEASURED_PREFIX = "measured_";
    /**
     * Where a scored table (one {@code predict --candidates} wrote, with {@code predicted_ms}) keeps its measured
     * throughput: its {@code tokens_per_s_per_gpu} column holds the predictions.
     */
    public static final String SCORED_RATE = MEASURED_PREFIX + "tokens_per_s_per_gpu";

    /**
     * Whether a table is one {@code predict --candidates} scored: its {@code predicted_ms} with their interval
     * ({@code low_ms}, {@code high_ms}), so that its {@code tokens_per_s_per_gpu} are predictions too. A table with
     * a {@code predicted_ms} alone ({@code plan}'s chosen runs, with their cost) is not: a throughput written beside
     * it is what was measured.
     */
    public static boolean scored(List<String> columns) {
        return columns.contains("predicted_ms") && columns.contains("low_ms") && columns.contains("high_ms");
    }

    /**
     * The column of a table's measured rates (tokens a second per GPU): {@code tokens_per_s_per_gpu}, or in a table
     * {@code predict --candidates} scored ({@link #scored}), whose column of that name holds predictions,
     * {@link #SCORED_RATE}.
     */
    public static String measuredRateColumn(List<String> columns) {
        return scored(columns) ? SCORED_RATE : MEASURED.get(1);
    }

    /** The columns kept as tags (the {@code source} column as {@value #PUBLICATION_TAG}). */
    public static final List<String> TAGS = List.of("id", "release", "system", "model_key", "task", "fit_weight");
    /** The tag of a row's {@code source} column (what published it); {@code source} tags where a row was read. */
    public static final String PUBLICATION_TAG = "publication";
    /** The shortest iteration a row may measure, ms. */
    public static final double MIN_MILLIS = 1e-3;
    /** The largest {@code fit_weight} a run takes (a calibration's and a fit's weight tag is read within it too). */
    public static final double MAX_FIT_WEIGHT = 1e6;
    /** The longest iteration a row may measure, ms (a day). */
    public static final double MAX_MILLIS = 86_400_000;

    private JobRuns() {
    }

    /**
     * Reads a job runs table.
     *
     * @param importer reads an ONNX graph a row names
     * @param devices  resolves a row's {@code device}
     * @param defaults values of columns a row lacks (a command line's options)
     * @throws InvalidInputException naming the file and line of a row without a measurement or with one out of range,
     *         and of any row the candidate reader refuses
     */
    public static List<Sample> read(Path csv, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices, Map<String, String> defaults) {
        return read(List.of(java.util.Objects.requireNonNull(csv, "csv")), importer, devices, defaults);
    }

    /**
     * Reads several job runs tables as one: a run is counted once, so a table given twice, an {@code id} that
     * names a run in two tables (a row copied from one into the other), or a row without an id that repeats another
     * cell for cell, is refused naming both places.
     *
     * @throws InvalidInputException as {@link #read(Path, Function, Function, Map)}, and naming a table given twice,
     *         an id's two lines or a repeated row's
     */
    public static List<Sample> read(List<Path> tables, Function<Path, ModelGraph> importer,
            Function<String, Optional<Device>> devices, Map<String, String> defaults) {
        java.util.Objects.requireNonNull(tables, "tables").forEach(t -> java.util.Objects.requireNonNull(t, "table"));
        List<Path> seen = new ArrayList<>();
        for (Path t : tables) {
            for (Path s : seen) {
                if (sameFile(s, t)) {
                    throw InvalidInputException.inSource(t.toString(), "this runs table is given twice (also as "
                            + s + "): each run counts once; give it once");
                }
            }
            seen.add(t);
        }
        List<Sample> out = new ArrayList<>();
        // a run named twice is a row copied by mistake, not a second measurement: it would count twice
        Map<String, String> ids = new java.util.HashMap<>();
        // so is a row without an id that repeats another cell for cell (a measurement taken again differs in its time)
        Map<String, String> rows = new java.util.HashMap<>();
        for (Path t : tables) {
            read(t, importer, devices, defaults, ids, rows, out);
        }
        return out;
    }

    private static boolean sameFile(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (java.io.IOException e) {
            // one of them is unreadable: its own read says so
            return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
        }
    }

    private static void read(Path csv, Function<Path, ModelGraph> importer, Function<String, Optional<Device>> devices,
            Map<String, String> defaults, Map<String, String> ids, Map<String, String> rows, List<Sample> out) {
        try (Candidates.Chunks in = Candidates.open(csv, importer, devices, defaults, true)) {
            // a table predict --candidates scored holds predicted tokens_per_s_per_gpu and the measured ones, if
            // any, as measured_tokens_per_s_per_gpu
            String rate = measuredRateColumn(in.columns());
            Map<String, String> misspelt = misspelt(in.columns());
            if (!in.columns().contains(MEASURED.get(0)) && !in.columns().contains(rate)) {
                String named = misspelt.entrySet().stream().filter(e -> MEASURED.contains(e.getValue()))
                        .map(e -> " (its column '" + InvalidInputException.printable(e.getKey(), 40) + "' looks like "
                                + e.getValue() + " misspelt)").findFirst().orElse("");
                throw InvalidInputException.inSource(csv.toString(), "a job runs table needs measured_ms (one "
                        + "training iteration, ms) or " + rate + (rate.equals(SCORED_RATE) ? " (a scored table, "
                        + "with predicted_ms, low_ms and high_ms: its tokens_per_s_per_gpu are predictions)" : "")
                        + "; it has " + in.columns() + named);
            }
            // a fit reads a run's weight, its cluster (system, release) and its id: their look-alikes are refused,
            // the labels' (task, model_key, source) and a rate's beside measured_ms warned of
            Map<String, String> refused = new java.util.LinkedHashMap<>(misspelt);
            refused.values().removeIf(k -> !FITTED.containsKey(k));
            Candidates.refuseNearMisses(csv.toString(), refused, refused.isEmpty() ? ""
                    : "read without it " + FITTED.get(refused.values().iterator().next()));
            // (none refused: the others are warned of)
            misspelt.forEach((c, k) -> LOG.warn("{}", Candidates.nearMissWarning(csv.toString(), c, k)));
            for (Candidates c = in.next(4096); !c.workloads().isEmpty(); c = in.next(4096)) {
                CsvTable t = c.table();
                for (int r = 0; r < t.size(); r++) {
                    int line = t.line(r);
                    Optional<String> id = t.opt(r, "id").filter(v -> !v.isEmpty());
                    String first = id.isPresent() ? ids.putIfAbsent(id.get(), t.source() + ":" + line) : null;
                    if (first != null) {
                        throw InvalidInputException.atLine(t.source(), line, "id '"
                                + InvalidInputException.printable(id.get(), 60) + "' names the run of "
                                + seenAt(first, t.source())
                                + " too: each run once (a configuration measured again is a run of its own id)");
                    }
                    if (id.isEmpty()) {
                        StringBuilder cells = new StringBuilder();
                        for (String col : new java.util.TreeSet<>(t.columns())) {
                            cells.append(col).append('\u0000').append(t.opt(r, col).orElse("").trim()).append('\u0000');
                        }
                        String same = rows.putIfAbsent(cells.toString(), t.source() + ":" + line);
                        if (same != null) {
                            throw InvalidInputException.atLine(t.source(), line, "this row repeats "
                                    + seenAt(same, t.source())
                                    + " cell for cell: a row copied by mistake would count twice (a configuration "
                                    + "measured again differs in its time; give the runs an id column to keep both)");
                        }
                    }
                    out.add(sample(t, r, c.workloads().get(r), rate));
                }
            }
        }
    }

    /** Where a run was first read ({@code source:line}), as a message names it: its line where in {@code source}. */
    private static String seenAt(String first, String source) {
        return first.startsWith(source + ":") ? "line " + first.substring(source.length() + 1) : first;
    }

    /** A runs table's columns a fit reads, each with what reading a table without it would do. */
    private static final Map<String, String> FITTED = Map.of(
            "fit_weight", "every row would weigh 1 in the fit",
            "system", "no row would name its cluster (a calibration's level and evaluate-clusters' splits group by it)",
            "release", "no row would name its cluster (a calibration's level and evaluate-clusters' splits group by it)",
            "id", "the runs would not be told apart by their ids (a calibration holds them out one by one by them)");

    /** The columns a job runs table reads beside a candidate table's. */
    private static final List<String> RUN_COLUMNS = java.util.stream.Stream.concat(java.util.stream.Stream.concat(
            MEASURED.stream(), TAGS.stream()), java.util.stream.Stream.of("source")).toList();

    /**
     * The columns that look like a runs table's own column misspelt ({@code fit-weight}, {@code Measured_ms}), each
     * with that column (the candidate columns' near misses the candidate reader warns of itself).
     */
    public static Map<String, String> misspelt(List<String> columns) {
        Map<String, String> candidates = Candidates.nearMisses(columns);
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String c : columns) {
            if (!Candidates.COLUMNS.contains(c) && !RUN_COLUMNS.contains(c) && !candidates.containsKey(c)) {
                org.scaledl.Suggestions.misspelt(c, RUN_COLUMNS).filter(k -> !columns.contains(k))
                        .ifPresent(k -> out.put(c, k));
            }
        }
        return out;
    }

    private static Optional<Double> positive(String cell) {
        try {
            double x = CsvTable.parseNumber(cell);
            return x > 0 && Double.isFinite(x) ? Optional.of(x) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * The iteration a rate of tokens a second per GPU means, ms: the iteration's tokens (the sequence times the
     * sequences of every data-parallel replica) over the rate times the job's GPUs.
     */
    private static double millisAtRate(Workload w, long seq, double tokensPerSecondPerGpu) {
        double tokens = (double) seq * w.batch() * w.parallelism().data();
        return 1e3 * tokens / (tokensPerSecondPerGpu * w.parallelism().ranks());
    }

    /** How far apart a row's measured_ms and the time its rate means may be before it is warned of (rounding). */
    static final double RATE_DISAGREEMENT = 0.1;

    /**
     * How many times apart a row's measured_ms and the time its rate means are refused: no rounding or a job's
     * description takes them that far; a unit does (a thousand).
     */
    public static final double UNITS_APART = 100;

    private static Sample sample(CsvTable t, int r, Workload w, String rateColumn) {
        int line = t.line(r);
        double ms;
        if (t.opt(r, "measured_ms").isPresent()) {
            ms = t.numberInRange(r, "measured_ms", MIN_MILLIS, MAX_MILLIS);
            // (a rate cell that is no positive number beside a measured_ms is left as it was: the time is used)
            Optional<Double> rate = t.opt(r, rateColumn).flatMap(JobRuns::positive);
            Optional<Double> implied = w.graph().transformer().filter(s -> rate.isPresent())
                    .map(s -> millisAtRate(w, s.seq(), rate.get()));
            // how far apart, as a log ratio (0 without a rate)
            double apart = implied.isPresent() ? Math.abs(Math.log(implied.get() / ms)) : 0;
            if (apart > Math.log(UNITS_APART)) {
                // a thousand times apart is a unit, not a rounding: which of the two is the iteration is not known
                throw InvalidInputException.atLine(t.source(), line, String.format(java.util.Locale.ROOT,
                        "measured_ms %s and %s %s disagree %.0f times (the rate means an iteration of %.1f ms): one "
                        + "of them is in another unit (seconds, microseconds), or the rate is not per GPU; give the "
                        + "iteration in milliseconds",
                        CsvTable.plain(ms), rateColumn, t.get(r, rateColumn), Math.max(implied.get() / ms,
                                ms / implied.get()), implied.get()));
            }
            if (apart > Math.log(1 + RATE_DISAGREEMENT)) {
                // both given and far apart: one of them is wrong (measured_ms is the one fitted)
                LOG.warn("{}:{}: measured_ms {} and {} {} disagree: the rate means an iteration of {} ms ({}x); "
                        + "measured_ms is used (check the row)", t.source(), line, CsvTable.plain(ms), rateColumn,
                        t.get(r, rateColumn), String.format(java.util.Locale.ROOT, "%.1f", implied.get()),
                        String.format(java.util.Locale.ROOT, "%.2f", implied.get() / ms));
            }
        } else if (t.opt(r, rateColumn).isPresent()) {
            double rate = t.numberInRange(r, rateColumn, 1e-6, 1e12);
            long seq = w.graph().transformer().map(s -> s.seq()).orElseThrow(() ->
                    InvalidInputException.atLine(t.source(), line, rateColumn + " needs a transformer row "
                            + "(an ONNX graph's tokens are not known): give measured_ms"));
            ms = millisAtRate(w, seq, rate);
            if (!(ms >= MIN_MILLIS && ms <= MAX_MILLIS)) {
                throw InvalidInputException.atLine(t.source(), line, rateColumn + " " + rate + " means an "
                        + "iteration of " + ms + " ms, outside " + CsvTable.plain(MIN_MILLIS) + ".."
                        + CsvTable.plain(MAX_MILLIS));
            }
        } else {
            throw InvalidInputException.atLine(t.source(), line, "no measured_ms or " + rateColumn);
        }
        Workload.Builder b = w.toBuilder().tag(DatasetReader.SOURCE_TAG, t.source() + ":" + line);
        for (String tag : TAGS) {
            t.opt(r, tag).filter(v -> !v.isEmpty()).ifPresent(v -> b.tag(tag, v));
        }
        t.opt(r, "source").filter(v -> !v.isEmpty()).ifPresent(v -> b.tag(PUBLICATION_TAG, v));
        t.opt(r, "fit_weight").filter(v -> !v.isEmpty()).ifPresent(v -> t.numberInRange(r, "fit_weight", 0,
                MAX_FIT_WEIGHT));
        return Sample.of(b.build(), ms);
    }
}
