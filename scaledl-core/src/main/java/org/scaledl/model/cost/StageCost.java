package org.scaledl.model.cost;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.scaledl.Checks;
import org.scaledl.workload.OpFamily;

/**
 * What a layer cost stage says one iteration of a workload costs: each layer's time by its index in the graph
 * ({@link org.scaledl.graph.ModelGraph#layer(int)}), and the workload-level terms (communication, overhead). A layer
 * is its index; its name is for people, so a stage never looks a layer up by name.
 *
 * <pre>{@code
 * StageCost c = stage.cost(workload);
 * double conv = c.layerMillis(12);          // layer 12's forward (and backward) time
 * double all = c.totalMillis();
 * }</pre>
 *
 * <p>Immutable: the arrays are copied in and out.
 */
public final class StageCost {
    private final double[] layerMillis;
    private final OpFamily[] families;
    private final List<Term> terms;
    private final double total;
    private final double memoryBytes;
    private final MemoryUse memoryParts;
    private final List<Note> notes;

    /** What a note on a cost says. */
    public enum NoteKind {
        /** Something the workload did not say, taken as its standard (a topology from the device, a schedule). */
        ASSUMED,
        /** What the cost chose where the workload left the choice to it (the recomputation of {@code auto}). */
        CHOSEN,
        /**
         * What the workload says that may not be what was meant (a context beyond the configuration's positions, ZeRO
         * over one replica, fewer micro-batches than pipeline stages, tensor parallelism across nodes): taken as said,
         * and warned of.
         */
        UNUSUAL,
        /**
         * How the cost read what the workload said, or where its time goes that its user may not expect (a host that
         * sets the pace, an uneven pipeline, a precision the GPU runs in another): said, not assumed.
         */
        NOTED
    }

    /**
     * A note on what the cost assumed, chose or read.
     *
     * @param kind what it is
     * @param text one sentence for people
     */
    public record Note(NoteKind kind, String text) {
        /** Validates. */
        public Note {
            Objects.requireNonNull(kind, "kind");
            Checks.argument(text != null && !text.isBlank(), "a note needs a text");
        }

        /** Something the workload did not say, taken as its standard. */
        public static Note assumed(String text) {
            return new Note(NoteKind.ASSUMED, text);
        }

        /** What the cost chose where the workload left the choice to it. */
        public static Note chosen(String text) {
            return new Note(NoteKind.CHOSEN, text);
        }

        /** What the workload says that may not be what was meant. */
        public static Note unusual(String text) {
            return new Note(NoteKind.UNUSUAL, text);
        }

        /** How the cost read the workload, or where its time goes. */
        public static Note noted(String text) {
            return new Note(NoteKind.NOTED, text);
        }
    }

    /**
     * The term of the pipeline's fill and drain: the busiest stage's GPUs idle while the other stages run the first and
     * last micro-batches ({@link TermKind#OVERHEAD}).
     */
    public static final String PIPELINE_BUBBLE = "pipeline bubble";

    /**
     * The term of the time the GPUs wait for the host to dispatch their kernels: what the host's pace adds beyond the
     * GPUs' own time ({@link TermKind#OVERHEAD}).
     */
    public static final String HOST_DISPATCH = "host dispatch";

    /** What a workload-level term is. */
    public enum TermKind {
        /** Collective communication (gradient all-reduce, tensor-parallel activations, pipeline hand-offs). */
        COMMUNICATION,
        /** Per-iteration overhead, optimizer step, worker contention, pipeline bubble. */
        OVERHEAD,
        /**
         * Computation that belongs to no layer of the graph (LoRA adapters' products, a low-precision recipe's
         * quantisation of its operands).
         */
        COMPUTE
    }

    /**
     * A workload-level term.
     *
     * @param name   {@code allreduce}, {@code overhead}, {@code pipeline bubble}, ...
     * @param kind   what it is
     * @param millis its time, ms (finite, ≥ 0)
     */
    public record Term(String name, TermKind kind, double millis) {
        /** Validates. */
        public Term {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
            Checks.argument(Double.isFinite(millis) && millis >= 0, "term %s must be finite and >= 0: %s", name,
                    millis);
        }
    }

    private StageCost(double[] layerMillis, OpFamily[] families, List<Term> terms, double total, double memoryBytes,
            MemoryUse memoryParts, List<Note> notes) {
        this.layerMillis = layerMillis;
        this.families = families;
        this.terms = List.copyOf(terms);
        this.total = total;
        this.memoryBytes = memoryBytes;
        this.memoryParts = memoryParts;
        this.notes = List.copyOf(notes);
    }

    /**
     * A cost whose total is the sum of its parts.
     *
     * @param layerMillis per layer index, ms (0 for a layer without time; copied)
     * @param families    per layer index, its operator family (may hold null where a layer has no time; copied)
     * @param terms       the workload-level terms
     */
    public static StageCost of(double[] layerMillis, OpFamily[] families, List<Term> terms) {
        double sum = 0;
        for (double t : layerMillis) {
            sum += t;
        }
        for (Term t : terms) {
            sum += t.millis();
        }
        return withTotal(layerMillis, families, terms, sum);
    }

    /**
     * A cost with a total computed another way (a cached fast path that adds the same parts in another order: equal
     * up to rounding).
     */
    public static StageCost withTotal(double[] layerMillis, OpFamily[] families, List<Term> terms, double total) {
        Checks.argument(layerMillis.length == families.length, "%s layer times for %s families", layerMillis.length,
                families.length);
        Checks.argument(Double.isFinite(total) && total >= 0, "total must be finite and >= 0: %s", total);
        return new StageCost(layerMillis.clone(), families.clone(), terms, total, Double.NaN, null, List.of());
    }

    /**
     * A copy with the peak memory one device needs (weights, gradients, optimizer state, activations), bytes, and
     * notes on what the cost assumed, chose or read (a topology derived from the device, the recomputation of
     * {@code auto}, a pipeline bubble, ...).
     */
    public StageCost withMemory(double bytes, List<Note> notes) {
        Checks.argument(Double.isNaN(bytes) || bytes >= 0, "memory must be >= 0: %s", bytes);
        return new StageCost(layerMillis, families, terms, total, bytes, null, notes);
    }

    /**
     * A copy with the peak memory one device needs, bytes, in its parts (whose {@link MemoryUse#totalGb()} is the
     * same peak, up to rounding), and notes as {@link #withMemory(double, List)}.
     */
    public StageCost withMemory(double bytes, MemoryUse parts, List<Note> notes) {
        Checks.argument(bytes >= 0 && Math.abs(parts.totalGb() * MemoryUse.BYTES_PER_GIB - bytes) <= 1e-9 * (1 + bytes),
                "memory %s bytes is not its parts' %s GiB", bytes, parts.totalGb());
        return new StageCost(layerMillis, families, terms, total, bytes, parts, notes);
    }


    /** A copy with other notes ({@link #notes}), its memory kept. */
    public StageCost withNotes(List<Note> notes) {
        return new StageCost(layerMillis, families, terms, total, memoryBytes, memoryParts, notes);
    }

    /** What the peak memory is made of (the stage, states, activations, ...), when the stage says. */
    public java.util.Optional<MemoryUse> memoryParts() {
        return java.util.Optional.ofNullable(memoryParts);
    }

    /** The peak memory one device needs, bytes, when the stage estimates it. */
    public java.util.OptionalDouble memoryBytes() {
        return Double.isNaN(memoryBytes) ? java.util.OptionalDouble.empty() : java.util.OptionalDouble.of(memoryBytes);
    }

    /** What the cost assumed that the workload did not say, chose for it, or read from it (for warnings). */
    public List<Note> notes() {
        return notes;
    }

    /** Layers of the graph (the length of {@link #layerMillis()}). */
    public int layers() {
        return layerMillis.length;
    }

    /** One layer's time, ms. */
    public double layerMillis(int layer) {
        return layerMillis[layer];
    }

    /** Every layer's time by index, ms (a copy). */
    public double[] layerMillis() {
        return layerMillis.clone();
    }

    /** A layer's operator family, null when it has no time. */
    public OpFamily family(int layer) {
        return families[layer];
    }

    /** The workload-level terms. */
    public List<Term> terms() {
        return terms;
    }

    /** The whole iteration, ms. */
    public double totalMillis() {
        return total;
    }

    /** Every part multiplied by a factor (a calibration or a correction). */
    public StageCost scaled(double factor) {
        double[] l = layerMillis.clone();
        for (int i = 0; i < l.length; i++) {
            l[i] *= factor;
        }
        return new StageCost(l, families, terms.stream().map(t -> new Term(t.name(), t.kind(), t.millis() * factor))
                .toList(), total * factor, memoryBytes, memoryParts, notes);
    }

    @Override
    public String toString() {
        return "StageCost[" + total + " ms, " + layerMillis.length + " layers, " + terms + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StageCost c && Double.compare(c.total, total) == 0 && Arrays.equals(c.layerMillis,
                layerMillis) && Arrays.equals(c.families, families) && c.terms.equals(terms);
    }

    @Override
    public int hashCode() {
        return Objects.hash(total, Arrays.hashCode(layerMillis), terms);
    }
}
