package org.scaledl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.scaledl.eval.ErrorMetrics;
import org.scaledl.eval.Evaluation;
import org.scaledl.model.file.SafeFiles;

/** Renders an {@link Evaluation}: text table, JSON, predictions CSV and a log-log SVG scatter. */
final class Reports {
    private static final String[] COLOURS = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f"};

    private Reports() {
    }

    /**
     * Refuses an output file whose name does not end in one of {@code extensions} (lower-case, with the dot): what
     * the command writes is that format whatever the name says, so a name that says another would mislead.
     */
    static void requireExtension(Path out, String what, String... extensions) {
        String name = out.getFileName() == null ? "" : out.getFileName().toString().toLowerCase(Locale.ROOT);
        for (String x : extensions) {
            if (name.endsWith(x)) {
                return;
            }
        }
        throw new IllegalArgumentException("--out " + org.scaledl.InvalidInputException.escaped(out.toString())
                + ": " + what + " is written as " + String.join(" or ", extensions) + " (name the file so)");
    }

    /**
     * Whether two paths name one file or folder (symbolic links resolved); where either cannot be read (or does not
     * exist yet), whether their normalised absolute names are equal.
     */
    static boolean sameFile(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException e) {
            // one of them is unreadable or missing: its own read says so
            return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
        }
    }

    /** The files a dataset, a configuration folder or a GPU data root is read from, whatever their folder. */
    private static final java.util.Set<String> READ_FROM_FOLDERS = java.util.Set.of("runs.csv", "layers.csv",
            "machine.json", "repeats.csv", "passes.csv", "config.json", "lora.csv", "cards.csv", "models.csv");

    /** The folders of a GPU data root ({@code GpuData}): every file in them is data. */
    private static final java.util.Set<String> GPU_DATA_FOLDERS = java.util.Set.of("vtrain", "neusight", "deepbench",
            "llm-public");

    /**
     * Refuses an output file that would overwrite what the command reads: the file an input option names, or, inside
     * the folder it names (at any depth, symbolic links resolved), an existing file of the names datasets and
     * configurations are read from ({@code runs.csv}, {@code machine.json}, {@code config.json}, ...), an ONNX
     * graph, or any file in a GPU data root's folders ({@code vtrain/}, {@code neusight/}, {@code deepbench/},
     * {@code llm-public/}). Other files beside the data (an earlier output) may be written over. A null input is
     * skipped.
     */
    static void notAnInput(Path out, String option, Path input) {
        if (input == null || out == null) {
            return;
        }
        Path o = out.toAbsolutePath().normalize();
        Path in = input.toAbsolutePath().normalize();
        boolean inside = false;
        Path rel = null;
        try {
            inside = Files.exists(o) && Files.isDirectory(in) && o.toRealPath().startsWith(in.toRealPath());
            rel = inside ? in.toRealPath().relativize(o.toRealPath()) : null;
        } catch (IOException e) {
            // unreadable: compared by name only
            inside = Files.isDirectory(in) && o.startsWith(in) && Files.exists(o);
            rel = inside ? in.relativize(o) : null;
        }
        if (sameFile(out, input)) {
            throw new IllegalArgumentException("--out " + org.scaledl.InvalidInputException.escaped(out.toString())
                    + " is the file " + option + " names: writing it would overwrite what this command reads (write "
                    + "elsewhere)");
        }
        String name = o.getFileName() == null ? "" : o.getFileName().toString().toLowerCase(Locale.ROOT);
        boolean gpuData = false;
        for (int i = 0; rel != null && i < rel.getNameCount() - 1; i++) {
            gpuData |= GPU_DATA_FOLDERS.contains(rel.getName(i).toString());
        }
        if (inside && (READ_FROM_FOLDERS.contains(name) || name.endsWith(".onnx") || gpuData)) {
            throw new IllegalArgumentException("--out " + org.scaledl.InvalidInputException.escaped(out.toString())
                    + " would overwrite a file inside the folder " + option + " names ("
                    + org.scaledl.InvalidInputException.escaped(input.toString()) + "): write elsewhere");
        }
    }

    static void table(Evaluation e, PrintStream out) {
        out.printf(Locale.ROOT, "%-20s %5s %8s %10s %9s %9s %9s%n", "method", "n", "MRE", "RMSE ms", "within10",
                "spearman", "in 90% PI");
        for (String m : e.methods()) {
            ErrorMetrics x = e.metrics().get(m);
            double cov = coverage(e, m);
            // an undefined rank correlation (fewer than two runs, or every run alike) is "-", as in the JSON's null
            out.printf(Locale.ROOT, "%-20s %5d %7.1f%% %10.1f %8.0f%% %9s %9s%n", m, x.n(), 100 * x.mre(),
                    x.rmseMs(), 100 * x.within10(), Double.isFinite(x.spearman())
                            ? String.format(Locale.ROOT, "%.3f", x.spearman()) : "-", Double.isNaN(cov) ? "-"
                            : String.format(Locale.ROOT, "%.1f%%", 100 * cov));
        }
        out.println();
        out.println("MRE per test model:");
        List<String> models = new ArrayList<>(e.perModel().get(e.methods().get(0)).keySet());
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-20s", "model"));
        for (String m : e.methods()) {
            header.append(String.format(Locale.ROOT, " %16s", m));
        }
        out.println(header);
        for (String model : models) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-20s", model));
            for (String m : e.methods()) {
                ErrorMetrics x = e.perModel().get(m).get(model);
                line.append(String.format(Locale.ROOT, " %15.1f%%", 100 * x.mre()));
            }
            out.println(line);
        }
    }

    static String json(Evaluation e) throws IOException {
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        root.put("units", "mre, within10 and interval_coverage are fractions (0.05 = 5 %); rmse_ms is ms");
        ObjectNode methods = root.putObject("methods");
        for (String m : e.methods()) {
            ObjectNode o = methods.putObject(m);
            put(o, e.metrics().get(m));
            number(o, "interval_coverage", coverage(e, m));
        }
        ObjectNode per = root.putObject("per_model");
        for (Map.Entry<String, Map<String, ErrorMetrics>> me : e.perModel().entrySet()) {
            ObjectNode pm = per.putObject(me.getKey());
            me.getValue().forEach((model, x) -> put(pm.putObject(model), x));
        }
        return pretty(root);
    }

    private static void put(ObjectNode o, ErrorMetrics x) {
        o.put("n", x.n());
        o.put("mre", x.mre());
        o.put("rmse_ms", x.rmseMs());
        o.put("within10", x.within10());
        number(o, "spearman", x.spearman());
    }

    /**
     * The share of a method's held-out measurements inside its prediction intervals; NaN for methods that give
     * points.
     */
    static double coverage(Evaluation e, String method) {
        int in = 0;
        int n = 0;
        for (Evaluation.Row r : e.predictions()) {
            if (!r.method().equals(method)) {
                continue;
            }
            if (r.prediction().lowMillis() == r.prediction().highMillis()) {
                return Double.NaN;
            }
            n++;
            double y = r.sample().millis();
            in += y >= r.prediction().lowMillis() && y <= r.prediction().highMillis() ? 1 : 0;
        }
        return n == 0 ? Double.NaN : (double) in / n;
    }

    /** "cross-validated MRE 12.3%", or why there is none (fewer than three groups of training runs). */
    static String cvMre(double mre) {
        return Double.isFinite(mre) ? String.format(java.util.Locale.ROOT, "cross-validated MRE %.1f%%", 100 * mre)
                : "no cross-validated MRE: fewer than 3 groups (families) of training runs";
    }

    /**
     * How many of {@code runs} are runs of {@code others} too: the same job and measured time
     * ({@link org.scaledl.workload.Sample#key()}), a copy rather than a measurement of its own.
     */
    static long runsOf(List<org.scaledl.workload.Sample> runs, List<org.scaledl.workload.Sample> others) {
        java.util.Set<String> keys = new java.util.HashSet<>();
        others.forEach(x -> keys.add(x.key()));
        return runs.stream().filter(x -> keys.contains(x.key())).count();
    }

    /** Refuses a {@code --folds} that is neither 0 (leave one group out) nor 2 or more, naming the option. */
    static void checkFolds(int folds) {
        if (folds != 0 && folds < 2) {
            throw new IllegalArgumentException("--folds must be 0 (leave one group out) or 2 or more, got " + folds);
        }
    }

    /**
     * JSON text of a tree, indented, every number that is not finite (an undefined figure: NaN, an infinity) written as
     * {@code null}, as the documentation says of them (Jackson writes them as the strings "NaN" and "Infinity").
     */
    static String pretty(com.fasterxml.jackson.databind.JsonNode root) throws IOException {
        return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(finite(root));
    }

    /** {@link #pretty} on one line (a JSON line of a stream of them). */
    static String compact(com.fasterxml.jackson.databind.JsonNode root) throws IOException {
        return new ObjectMapper().writeValueAsString(finite(root));
    }

    /** {@link #pretty}, printed on standard output. */
    static void printJson(com.fasterxml.jackson.databind.JsonNode root) throws IOException {
        System.out.println(pretty(root));
    }

    /** The tree with its non-finite numbers replaced by nulls (in place; the tree is returned). */
    private static com.fasterxml.jackson.databind.JsonNode finite(com.fasterxml.jackson.databind.JsonNode n) {
        if (n instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String k : names) {
                com.fasterxml.jackson.databind.JsonNode v = o.get(k);
                if (v.isNumber() && !Double.isFinite(v.asDouble())) {
                    o.putNull(k);
                } else {
                    finite(v);
                }
            }
        } else if (n instanceof com.fasterxml.jackson.databind.node.ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i).isNumber() && !Double.isFinite(a.get(i).asDouble())) {
                    a.set(i, com.fasterxml.jackson.databind.node.NullNode.getInstance());
                } else {
                    finite(a.get(i));
                }
            }
        }
        return n;
    }

    /** Puts a number, or {@code null} where there is none (NaN: nothing to score). */
    static void number(ObjectNode o, String key, double v) {
        if (Double.isNaN(v)) {
            o.putNull(key);
        } else {
            o.put(key, v);
        }
    }

    static void csv(Evaluation e, Path file) {
        StringBuilder sb = new StringBuilder(
                "method,fold,row,model,graph,batch,world_size,threads,phase,measured_ms,predicted_ms,low_ms,high_ms\n");
        for (Evaluation.Row r : e.predictions()) {
            var w = r.sample().workload();
            sb.append(String.format(Locale.ROOT, "%s,%s,%s,%s,%s,%d,%d,%d,%s,%.4f,%.4f,%.4f,%.4f%n", r.method(),
                    r.fold(), w.tag("row").orElse(""), w.tag("model").orElse(""), w.graph().name(), w.batch(),
                    w.worldSize(), w.threads(), w.phase().label(), r.sample().millis(), r.prediction().millis(),
                    r.prediction().lowMillis(), r.prediction().highMillis()));
        }
        write(file, sb.toString());
    }

    /** A log-log scatter of predicted vs measured, one colour per method, with the y = x line. */
    static void svg(Evaluation e, Path file) {
        svg(e, file, "Predicted vs measured, held-out families");
    }

    /** The scatter with a title; the first method (the project's) is drawn last, on top. */
    static void svg(Evaluation e, Path file, String title) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        for (Evaluation.Row r : e.predictions()) {
            for (double v : new double[] {r.sample().millis(), r.prediction().millis()}) {
                if (v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        // Axes fitted to the data: a little margin around the extremes, ticks at 1-2-5 steps of each decade.
        double l0 = Math.log10(lo) - 0.05;
        double l1 = Math.log10(hi) + 0.05;
        int size = 640;
        int pad = 70;
        double span = size - 2 * pad;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", size + 170, size));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", size + 170, size));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">%s"
                + "</text>%n", (size + 170) / 2, escape(title)));
        for (double decade = Math.floor(l0); decade <= Math.ceil(l1); decade++) {
            for (double m : new double[] {1, 2, 5}) {
                double d = decade + Math.log10(m);
                if (d < l0 || d > l1) {
                    continue;
                }
                double p = pad + (d - l0) / (l1 - l0) * span;
                sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                        + "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", p, pad, p,
                        size - pad, pad, size - p, size - pad, size - p));
                sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>"
                        + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", p, size - pad + 18,
                        label(d), pad - 6, size - p + 4, label(d)));
            }
        }
        sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\" "
                + "stroke-dasharray=\"4 3\"/>%n", pad, size - pad, size - pad, pad));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">measured (ms)</text>%n",
                size / 2, size - 20));
        sb.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 20 %d)\">predicted (ms)</text>%n", size / 2, size / 2));
        for (int m = e.methods().size() - 1; m >= 0; m--) {
            String name = e.methods().get(m);
            String colour = COLOURS[m % COLOURS.length];
            for (Evaluation.Row r : e.predictions()) {
                if (!r.method().equals(name) || r.prediction().millis() <= 0) {
                    continue;
                }
                double x = pad + (Math.log10(r.sample().millis()) - l0) / (l1 - l0) * span;
                double y = size - pad - (Math.log10(r.prediction().millis()) - l0) / (l1 - l0) * span;
                sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" "
                        + "fill-opacity=\"0.55\"/>%n", x, y, colour));
            }
            ErrorMetrics x = e.metrics().get(name);
            sb.append(String.format(Locale.ROOT, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s (MRE %.1f%%)</text>%n", size - 40, pad + 20 * m, colour,
                    size - 30, pad + 20 * m + 4, name, 100 * x.mre()));
        }
        sb.append("</svg>\n");
        write(file, sb.toString());
    }

    private static String label(double decade) {
        double v = Math.pow(10, decade);
        return v >= 1 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2g", v);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /**
     * Writes a text file (UTF-8) safely ({@link SafeFiles#write}: atomic, never replacing a device, a pipe or a
     * link), creating its folder.
     *
     * @throws UncheckedIOException naming the file when it cannot be written
     */
    static void write(Path file, String text) {
        SafeFiles.write(file, text.getBytes(StandardCharsets.UTF_8));
    }
}
