package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.scaledl.InvalidInputException;
import org.scaledl.onnx.OnnxImporter.FixedBatch;
import org.scaledl.onnx.OnnxImporter.Options;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which graph inputs carry data, and where their batch dimension is.
 *
 * <p>A graph input with a symbolic (or unknown) dimension, or without a shape, is a data input. The batch is
 * <ol>
 * <li>a symbolic dimension whose name says so (it contains {@code batch}, as in {@code batch} or
 * {@code batch_size}), at any axis: a time-major {@code [seq, batch, features]} sequence;</li>
 * <li>otherwise the symbolic <em>leading</em> axis of the first data input that has one;</li>
 * <li>otherwise the fixed leading axis of the first data input (an export without {@code dynamic_axes}), treated
 * as the batch or refused as {@link FixedBatch} says.</li>
 * </ol>
 * Every other symbolic dimension must be bound with {@link Options#dimensions()}: a spatial {@code H} of an
 * {@code [1, 3, H, W]} image is never taken as the batch, so batch 8 does not predict an image 8 pixels high.
 */
final class DataInputs {
    private static final Logger LOG = LoggerFactory.getLogger(DataInputs.class);

    private final Set<String> data;
    private final String batchSymbol;
    private final Map<String, Integer> batchAxis;
    private final long exportedBatch;

    private DataInputs(Set<String> data, String batchSymbol, Map<String, Integer> batchAxis, long exportedBatch) {
        this.data = Collections.unmodifiableSet(data);
        this.batchSymbol = batchSymbol;
        this.batchAxis = Collections.unmodifiableMap(batchAxis);
        this.exportedBatch = exportedBatch;
    }

    /** True for a dimension without a size (named or unnamed). */
    static boolean symbolic(OnnxWire.Dimension d) {
        return !d.isKnown();
    }

    private static String param(OnnxWire.Dimension d) {
        return d.param() == null ? "" : d.param();
    }

    /** True for a dimension name that denotes the batch ({@code batch}, {@code batch_size}, {@code Batch}...). */
    static boolean namesTheBatch(String symbol) {
        return symbol.toLowerCase(Locale.ROOT).contains("batch");
    }

    /**
     * The batch symbol of these data inputs: a symbol named as the batch, else the symbolic leading axis of the
     * first input that has one ({@code ""} when that axis is unnamed); empty when the batch is not symbolic.
     */
    static Optional<String> batchSymbol(List<OnnxWire.ValueInfo> dataInputs) {
        for (OnnxWire.ValueInfo v : dataInputs) {
            for (OnnxWire.Dimension d : v.dims()) {
                if (symbolic(d) && namesTheBatch(param(d))) {
                    return Optional.of(param(d));
                }
            }
        }
        for (OnnxWire.ValueInfo v : dataInputs) {
            if (!v.dims().isEmpty() && symbolic(v.dims().get(0))) {
                return Optional.of(param(v.dims().get(0)));
            }
        }
        return Optional.empty();
    }

    /** The graph inputs that are data inputs (symbolic or shapeless), of those that are not initializers. */
    static List<OnnxWire.ValueInfo> symbolicInputs(List<OnnxWire.ValueInfo> graphInputs) {
        List<OnnxWire.ValueInfo> out = new ArrayList<>();
        for (OnnxWire.ValueInfo v : graphInputs) {
            if (!v.hasShape() || v.dims().stream().anyMatch(DataInputs::symbolic)) {
                out.add(v);
            }
        }
        return out;
    }

    /**
     * Classifies the graph inputs that are not initializers.
     *
     * @throws InvalidInputException naming the file when the batch symbol is bound, when other symbolic dimensions
     *         are not (naming each one's input, axis and symbol, and the {@code --dim} that binds it), or when a
     *         fixed batch is refused
     */
    static DataInputs classify(String source, List<OnnxWire.ValueInfo> graphInputs, Options options) {
        List<OnnxWire.ValueInfo> symbolicInputs = symbolicInputs(graphInputs);
        Set<String> data = new LinkedHashSet<>();
        symbolicInputs.forEach(v -> data.add(v.name()));
        String batch = batchSymbol(symbolicInputs).orElse(null);
        if (batch != null && !batch.isEmpty() && options.dimensions().containsKey(batch)) {
            throw InvalidInputException.inSource(source, "'" + batch + "' is the batch dimension, which "
                    + "is a setting of each workload, not of the import; bind only the other dimensions");
        }
        Map<String, Integer> axis = new HashMap<>();
        Map<String, String> unbound = new LinkedHashMap<>();
        String firstNamed = null;
        for (OnnxWire.ValueInfo v : symbolicInputs) {
            for (int d = 0; d < v.dims().size(); d++) {
                OnnxWire.Dimension dim = v.dims().get(d);
                if (!symbolic(dim)) {
                    continue;
                }
                String p = param(dim);
                if (!p.isEmpty() && p.equals(batch) || p.isEmpty() && d == 0 && "".equals(batch)) {
                    axis.putIfAbsent(v.name(), d);
                    if (d != 0 && axis.get(v.name()) == d) {
                        LOG.info("{}: input '{}' has its batch '{}' at axis {} (named so)", source, v.name(), p, d);
                    }
                } else if (p.isEmpty()) {
                    unbound.put("#" + v.name() + "#" + d, "dimension " + d + " of input '" + v.name()
                            + "' (unnamed)");
                } else if (!options.dimensions().containsKey(p) && !unbound.containsKey(p)) {
                    unbound.put(p, "'" + p + "' (input '" + v.name() + "', axis " + d + ")");
                    firstNamed = firstNamed == null ? p : firstNamed;
                }
            }
        }
        if (!unbound.isEmpty()) {
            throw InvalidInputException.inSource(source, unboundMessage(batch, unbound.values(), firstNamed));
        }
        long exported = -1;
        if (batch == null && !graphInputs.isEmpty()) {
            List<OnnxWire.ValueInfo> candidates = symbolicInputs.isEmpty() ? List.of(graphInputs.get(0))
                    : symbolicInputs;
            OnnxWire.ValueInfo first = candidates.get(0);
            data.add(first.name());
            if (first.hasShape() && !first.dims().isEmpty() && first.dims().get(0).isKnown()) {
                exported = first.dims().get(0).value();
                if (options.fixedBatch() == FixedBatch.REFUSE) {
                    throw InvalidInputException.inSource(source, "input '" + first.name() + "' has the fixed "
                            + "batch size " + exported + " (exported without dynamic_axes); re-export with "
                            + "torch.onnx.export(..., dynamic_axes={'" + first.name() + "': {0: 'batch'}})");
                }
                LOG.warn("{}: input '{}' has a fixed first dimension ({}, an export without dynamic_axes); it is "
                        + "treated as the batch", source, first.name(), exported);
                for (OnnxWire.ValueInfo v : candidates) {
                    if (v.hasShape() && !v.dims().isEmpty() && v.dims().get(0).isKnown()
                            && v.dims().get(0).value() == exported) {
                        axis.put(v.name(), 0);
                    }
                }
            }
        }
        return new DataInputs(data, batch, axis, exported);
    }

    private static String unboundMessage(String batch, java.util.Collection<String> unbound, String firstNamed) {
        StringBuilder b = new StringBuilder("symbolic dimensions other than the batch");
        if (batch != null && !batch.isEmpty()) {
            b.append(" ('").append(batch).append("')");
        }
        b.append(" must be bound (only the leading axis of a data input, or a dimension named as the batch, is "
                + "the batch): ").append(String.join(", ", unbound));
        if (firstNamed != null) {
            b.append("; bind each named one with --dim NAME=SIZE, e.g. --dim ").append(firstNamed)
                    .append("=224 with its real size (API: OnnxImporter.Options.builder().dim(\"").append(firstNamed)
                    .append("\", 224); CLI: --dim name=size)");
        }
        if (unbound.stream().anyMatch(u -> u.endsWith("(unnamed)"))) {
            b.append("; an unnamed dimension cannot be bound: re-export naming it in dynamic_axes, or with a fixed "
                    + "size");
        }
        return b.toString();
    }

    /** Names of the data inputs, in declaration order. */
    Set<String> data() {
        return data;
    }

    /** The batch symbol ({@code ""} for an unnamed leading axis), empty when the batch is fixed or absent. */
    Optional<String> batchSymbol() {
        return Optional.ofNullable(batchSymbol);
    }

    /** The axis of each data input that is the batch (inputs without one keep their declared sizes). */
    Map<String, Integer> batchAxis() {
        return batchAxis;
    }

    /** The fixed leading size treated as the batch, or -1 when the batch is symbolic (or there is none). */
    long exportedBatch() {
        return exportedBatch;
    }

    /** The concrete size of a declared dimension at a batch size, or -1 when it is not determined. */
    long size(OnnxWire.Dimension dim, long batch, Options options) {
        if (dim.isKnown()) {
            return dim.value();
        }
        String p = param(dim);
        if (!p.isEmpty() && p.equals(batchSymbol)) {
            return batch;
        }
        Long bound = options.dimensions().get(p);
        return bound == null ? -1 : bound;
    }
}
