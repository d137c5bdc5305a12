package org.scaledl.model.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.TransformerShape;
import org.scaledl.model.file.Fields;
import org.scaledl.workload.Device;
import org.scaledl.workload.Workload;

/**
 * A bias a fit left on its own runs of one architecture on one GPU: the execution model's coefficients are one set
 * for every job, so where they predict every run of a model on a GPU too fast (or too slow), a job of that model on
 * that GPU is likely missed the same way. Found in sample, from the runs' errors with the model fitted on them, and
 * kept only where it is clear: {@value #MIN_RUNS} runs or more of {@value #MIN_JOBS} jobs or more, a mean error of
 * at least {@value #MIN_ERROR} (its logarithm's weighted mean), and at least {@value #MIN_AGREEING} of the runs'
 * weight erring its way (a run predicted exactly errs no way: it counts against). Training runs only, and said of
 * training jobs only. A prediction of such a job says it ({@link #note}); the prediction is not moved (a correction
 * learned from these runs alone would predict them, not the next model).
 *
 * <pre>{@code
 * model.biases().forEach(b -> System.out.println(b.label() + " on " + b.device() + ": " + b.meanError()));
 * }</pre>
 *
 * @param architecture the architecture's key ({@link #architecture(TransformerShape)}: its sizes, not the sequence)
 * @param label        what the runs call it (their family, or their graph's name), to name it in the note
 * @param device       the GPU's name
 * @param runs         the runs of it (with weight)
 * @param jobs         the distinct jobs among them
 * @param meanError    {@code exp(mean log(predicted / measured)) - 1}, weighted as the fit weighs the runs (negative:
 *                     predicted too fast)
 * @param erring       the runs whose error has the mean's sign (a run predicted exactly is not one)
 */
public record FittedBias(String architecture, String label, String device, int runs, int jobs, double meanError,
        int erring) {
    /** The fewest runs whose bias is kept. */
    public static final int MIN_RUNS = 3;
    /** The fewest distinct jobs among them (repeats of one job tell its level, not the model's). */
    public static final int MIN_JOBS = 2;
    /** The least mean error kept (10 %). */
    public static final double MIN_ERROR = 0.10;
    /** The least share of the runs' weight whose error has the mean's sign. */
    public static final double MIN_AGREEING = 0.75;
    private static final int MAX_TEXT = 200;

    /**
     * Validates what any bias is (the thresholds a fit keeps biases by are {@link #of}'s, so a file of a release that
     * kept others still loads): texts of 1 to 200 printable characters, counts from 1 with no more jobs or runs erring
     * than runs, a finite mean error above -1.
     */
    public FittedBias {
        for (String text : new String[] {architecture, label, device}) {
            Checks.argument(text != null && !text.isBlank() && text.length() <= MAX_TEXT
                    && text.chars().noneMatch(Character::isISOControl), "a fitted bias's architecture, label and "
                    + "device are texts of 1 to %s printable characters: %s", MAX_TEXT, text == null ? null
                    : InvalidInputException.printable(text, 40));
        }
        Checks.argument(runs >= 1 && jobs >= 1 && jobs <= runs && erring >= 1 && erring <= runs,
                "a fitted bias of %s runs, %s jobs, %s erring", runs, jobs, erring);
        Checks.argument(Double.isFinite(meanError) && meanError > -1, "a fitted bias's mean error must be finite and "
                + "above -1: %s", meanError);
    }

    /**
     * The key of a transformer's architecture: its sizes, experts and routing, not its sequence (Llama 3 8B at 4,096
     * and 8,192 tokens is one model).
     */
    public static String architecture(TransformerShape t) {
        return List.of(t.hidden(), t.heads(), t.kvHeads(), t.ffn(), (long) t.layers(), t.vocab(), (long) t.experts(),
                (long) t.topK()).toString();
    }

    /**
     * Whether a job is a pretraining job of this bias's architecture on its GPU (the runs were such jobs; a LoRA
     * job's frozen base runs other work).
     */
    public boolean concerns(Workload w) {
        return w.phase() == org.scaledl.workload.Phase.TRAIN && w.loraRank() == 0
                && w.graph().transformer().map(FittedBias::architecture).filter(architecture::equals).isPresent()
                && w.device().map(d -> Device.key(d.name()).equals(Device.key(device))).orElse(false);
    }

    /** What a prediction of a job it concerns says. */
    public String note() {
        return String.format(Locale.ROOT, "the %d runs (%d jobs) of %s on %s this model was fitted on are predicted "
                + "%.1f %% too %s on average (%d of the %d too %s; the mean weighs them as the fit did): its "
                + "coefficients, one set for every job, leave that bias there, so this prediction is likely too %s "
                + "as well", runs, jobs, label, device, 100 * Math.abs(meanError), meanError < 0 ? "fast" : "slow",
                erring, runs, meanError < 0 ? "fast" : "slow", meanError < 0 ? "fast" : "slow");
    }

    /**
     * The clear biases among runs' in-sample errors, by architecture and GPU (the larger first).
     *
     * @param workloads each run's workload (a run without a transformer or a GPU is passed over)
     * @param logErrors each run's {@code log(predicted / measured)}
     * @param weights   each run's weight in the fit (0: passed over)
     * @param jobs      each run's job
     * @param labels    what each run calls its model
     */
    static List<FittedBias> of(List<Workload> workloads, double[] logErrors, double[] weights, List<String> jobs,
            List<String> labels) {
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < workloads.size(); i++) {
            Workload w = workloads.get(i);
            if (weights[i] > 0 && Double.isFinite(logErrors[i]) && w.graph().transformer().isPresent()
                    && w.device().isPresent() && w.phase() == org.scaledl.workload.Phase.TRAIN) {
                groups.computeIfAbsent(architecture(w.graph().transformer().get()) + "\n"
                        + w.device().get().name(), k -> new ArrayList<>()).add(i);
            }
        }
        List<FittedBias> out = new ArrayList<>();
        for (List<Integer> g : groups.values()) {
            double sum = 0;
            double weight = 0;
            for (int i : g) {
                sum += weights[i] * logErrors[i];
                weight += weights[i];
            }
            double mean = sum / weight;
            double agreeing = 0;
            int erring = 0;
            for (int i : g) {
                if (Math.signum(logErrors[i]) == Math.signum(mean)) {
                    agreeing += weights[i];
                    erring++;
                }
            }
            long distinct = g.stream().map(jobs::get).distinct().count();
            double error = Math.expm1(mean);
            if (g.size() >= MIN_RUNS && distinct >= MIN_JOBS && Math.abs(error) >= MIN_ERROR
                    && agreeing >= MIN_AGREEING * weight) {
                Workload first = workloads.get(g.get(0));
                // (a label or name a file could not hold is clipped and escaped: a fit must write what loads)
                String label = InvalidInputException.printable(g.stream().map(labels::get)
                        .filter(l -> !l.isBlank()).findFirst().orElse(first.graph().name()), MAX_TEXT / 2);
                out.add(new FittedBias(architecture(first.graph().transformer().get()), label,
                        InvalidInputException.printable(first.device().get().name(), MAX_TEXT - 3), g.size(),
                        (int) distinct, error, erring));
            }
        }
        out.sort(ORDER);
        return List.copyOf(out);
    }

    /** The saved form. */
    ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("architecture", architecture);
        o.put("label", label);
        o.put("device", device);
        o.put("runs", runs);
        o.put("jobs", jobs);
        o.put("mean_error", meanError);
        o.put("erring", erring);
        return o;
    }

    /**
     * Reads {@link #toJson()}.
     *
     * @throws InvalidInputException naming the field of a missing, out-of-range or inconsistent value
     */
    static FittedBias fromJson(JsonNode o, String where) {
        if (o == null || !o.isObject()) {
            throw InvalidInputException.of(where + " must be an object");
        }
        String architecture = text(o, where, "architecture");
        String label = text(o, where, "label");
        String device = text(o, where, "device");
        int runs = (int) whole(o, where, "runs");
        int jobs = (int) whole(o, where, "jobs");
        int erring = (int) whole(o, where, "erring");
        double mean = Fields.inRange(o.get("mean_error"), where + ".mean_error", -0.999999, 1e6);
        try {
            return new FittedBias(architecture, label, device, runs, jobs, mean, erring);
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.of(where + ": " + e.getMessage());
        }
    }

    private static String text(JsonNode o, String where, String key) {
        JsonNode v = o.get(key);
        if (v == null || !v.isTextual() || v.asText().isBlank() || v.asText().length() > MAX_TEXT
                || v.asText().chars().anyMatch(Character::isISOControl)) {
            throw InvalidInputException.of(where + "." + key + " must be a text of 1 to " + MAX_TEXT
                    + " printable characters");
        }
        return v.asText();
    }

    private static double whole(JsonNode o, String where, String key) {
        double v = Fields.inRange(o.get(key), where + "." + key, 1, 1e9);
        if (v != Math.rint(v)) {
            throw InvalidInputException.of(where + "." + key + " must be a whole number: " + v);
        }
        return v;
    }

    /**
     * The note of the first bias that concerns a job (in {@link #ORDER}), if any: of a bias this release would keep
     * ({@link #MIN_ERROR} at least either way; a file's smaller one is kept, not said).
     */
    static Optional<String> noteFor(List<FittedBias> biases, Workload w) {
        return biases.stream().filter(b -> Math.abs(b.meanError()) >= MIN_ERROR && b.concerns(w)).findFirst()
                .map(FittedBias::note);
    }

    /** The order biases are kept and said in: the larger first, then by label and device. */
    static final Comparator<FittedBias> ORDER = Comparator.comparingDouble((FittedBias b) -> -Math.abs(b.meanError()))
            .thenComparing(FittedBias::label).thenComparing(FittedBias::device)
            .thenComparing(FittedBias::architecture);
}
