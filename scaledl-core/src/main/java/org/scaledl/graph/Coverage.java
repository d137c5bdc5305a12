package org.scaledl.graph;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.scaledl.Checks;

/**
 * How much of an imported graph the importer understood: which layers have an output whose shape it could not
 * infer, which operator types it does not know, which shapes it took from the file's {@code value_info}, and what
 * it assumed (a fixed batch dimension treated as the batch, named dimensions bound by the caller). A prediction for
 * a graph that is not {@linkplain #isComplete() complete} is refused unless the caller allows partial graphs, and
 * then carries the share as a warning.
 *
 * <pre>{@code
 * Coverage c = OnnxImporter.read(path).coverage();
 * if (!c.isComplete()) {
 *     System.err.println(c.unresolvedLayers().size() + " layers unresolved: " + c.summary());
 * }
 * }</pre>
 *
 * @param layers             layers in the graph
 * @param unresolvedLayers   names of layers with an output of unknown shape, in topological order
 * @param unsupportedOperators operator types (with their domain when not the default) the importer does not know,
 *                           sorted
 * @param fromValueInfo      names of layers whose output shapes came from the file's {@code value_info}
 * @param unresolvedShareLayers unresolved layers over all layers
 * @param unresolvedShareBytes the bytes of known tensors read or written by unresolved layers over the bytes of all
 *                           layers' known tensors, at batch 1: a lower bound of the share of the graph's data
 *                           traffic that the prediction cannot account for (the unknown tensors are not counted)
 * @param exportedBatch      the fixed batch size of an export without a symbolic batch dimension, treated as the
 *                           batch; empty when the batch dimension was symbolic
 * @param boundDimensions    named dimensions bound by the caller (e.g. {@code seq=128})
 * @param firstProblem       why the first unresolved layer is unresolved ({@code ""} when complete)
 * @param notes              what else the importer noticed that bears on predictions without making the graph
 *                           incomplete: an opset newer than it knows, half-precision weights (one line each)
 */
public record Coverage(int layers, List<String> unresolvedLayers, List<String> unsupportedOperators,
        List<String> fromValueInfo, double unresolvedShareLayers, double unresolvedShareBytes,
        OptionalLong exportedBatch, Map<String, Long> boundDimensions, String firstProblem, List<String> notes) {

    /** Validates and copies. */
    public Coverage {
        Checks.argument(layers >= 0, "layers must be >= 0: %s", layers);
        unresolvedLayers = List.copyOf(unresolvedLayers);
        unsupportedOperators = unsupportedOperators.stream().sorted().toList();
        fromValueInfo = List.copyOf(fromValueInfo);
        Objects.requireNonNull(exportedBatch, "exportedBatch");
        boundDimensions = Collections.unmodifiableSortedMap(new TreeMap<>(boundDimensions));
        Objects.requireNonNull(firstProblem, "firstProblem");
        notes = List.copyOf(notes);
        Checks.argument(unresolvedShareLayers >= 0 && unresolvedShareLayers <= 1
                && unresolvedShareBytes >= 0 && unresolvedShareBytes <= 1, "shares must be in [0, 1]");
    }

    /** A coverage without notes. */
    public Coverage(int layers, List<String> unresolvedLayers, List<String> unsupportedOperators,
            List<String> fromValueInfo, double unresolvedShareLayers, double unresolvedShareBytes,
            OptionalLong exportedBatch, Map<String, Long> boundDimensions, String firstProblem) {
        this(layers, unresolvedLayers, unsupportedOperators, fromValueInfo, unresolvedShareLayers,
                unresolvedShareBytes, exportedBatch, boundDimensions, firstProblem, List.of());
    }

    /** Full coverage of a graph of {@code layers} layers built by hand or imported without a problem. */
    public static Coverage complete(int layers) {
        return new Coverage(layers, List.of(), List.of(), List.of(), 0, 0, OptionalLong.empty(), Map.of(), "");
    }

    /** True when every layer's shapes are known and every operator is supported. */
    public boolean isComplete() {
        return unresolvedLayers.isEmpty() && unsupportedOperators.isEmpty();
    }

    /** One line for logs and warnings. */
    public String summary() {
        if (isComplete()) {
            return "all " + layers + " layers resolved" + (fromValueInfo.isEmpty() ? ""
                    : " (" + fromValueInfo.size() + " from value_info)");
        }
        StringBuilder b = new StringBuilder();
        if (unresolvedLayers.isEmpty()) {
            // every shape known: only the operators to say
            return "unsupported operators (their layers counted as no work): " + String.join(", ",
                    unsupportedOperators);
        }
        b.append(unresolvedLayers.size()).append(" of ").append(layers).append(" layers have unknown shapes");
        if (!unresolvedLayers.isEmpty()) {
            b.append(String.format(java.util.Locale.ROOT, " (%.1f %% of the layers, at least %.1f %% of the bytes;"
                    + " first: '%s': %s)", 100 * unresolvedShareLayers, 100 * unresolvedShareBytes,
                    unresolvedLayers.get(0), firstProblem));
        }
        if (!unsupportedOperators.isEmpty()) {
            b.append("; unsupported operators (their layers counted as no work): ")
                    .append(String.join(", ", unsupportedOperators));
        }
        return b.toString();
    }
}
