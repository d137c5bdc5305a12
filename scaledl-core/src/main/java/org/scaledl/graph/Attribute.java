package org.scaledl.graph;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.scaledl.Checks;

/**
 * An operator attribute (ONNX {@code AttributeProto}): one of an integer, a float, a string, a tensor, or a list of
 * integers, floats or strings. Sub-graph attributes (control flow) are kept by name with {@link Kind#GRAPH} and no
 * value.
 */
public final class Attribute {
    /** Attribute kinds. */
    public enum Kind { INT, FLOAT, STRING, TENSOR, INTS, FLOATS, STRINGS, GRAPH }

    private final Kind kind;
    private final long[] ints;
    private final double[] floats;
    private final List<String> strings;
    private final TensorValue tensor;
    /** For a tensor attribute: its element type and dimensions (also when its values were not decoded). */
    private final DataType tensorType;

    private Attribute(Kind kind, long[] ints, double[] floats, List<String> strings, TensorValue tensor) {
        this(kind, ints, floats, strings, tensor, tensor == null ? null : tensor.type());
    }

    private Attribute(Kind kind, long[] ints, double[] floats, List<String> strings, TensorValue tensor,
            DataType tensorType) {
        this.kind = kind;
        this.ints = ints;
        this.floats = floats;
        this.strings = strings;
        this.tensor = tensor;
        this.tensorType = tensorType;
    }

    /** An integer attribute. */
    public static Attribute ofInt(long v) {
        return new Attribute(Kind.INT, new long[] {v}, new double[0], List.of(), null);
    }

    /** A float attribute. */
    public static Attribute ofFloat(double v) {
        return new Attribute(Kind.FLOAT, new long[0], new double[] {v}, List.of(), null);
    }

    /** A string attribute. */
    public static Attribute ofString(String v) {
        return new Attribute(Kind.STRING, new long[0], new double[0], List.of(Objects.requireNonNull(v, "v")), null);
    }

    /** A list of integers. */
    public static Attribute ofInts(long... v) {
        return new Attribute(Kind.INTS, v.clone(), new double[0], List.of(), null);
    }

    /** A list of floats. */
    public static Attribute ofFloats(double... v) {
        return new Attribute(Kind.FLOATS, new long[0], v.clone(), List.of(), null);
    }

    /** A list of strings. */
    public static Attribute ofStrings(List<String> v) {
        return new Attribute(Kind.STRINGS, new long[0], new double[0], List.copyOf(v), null);
    }

    /** A tensor attribute. */
    public static Attribute ofTensor(TensorValue t) {
        return new Attribute(Kind.TENSOR, new long[0], new double[0], List.of(), Objects.requireNonNull(t, "t"));
    }

    /**
     * A tensor attribute too large to decode (a well-formed table of index values, say): its type and dimensions are
     * kept, its values are not ({@link #tensorValue()} is empty).
     */
    public static Attribute ofLargeTensor(DataType type, long[] dims) {
        Objects.requireNonNull(type, "type");
        for (long d : dims) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in " + Arrays.toString(dims));
            }
        }
        return new Attribute(Kind.TENSOR, dims.clone(), new double[0], List.of(), null, type);
    }

    /** A sub-graph attribute, kept without its body. */
    public static Attribute ofGraph() {
        return new Attribute(Kind.GRAPH, new long[0], new double[0], List.of(), null);
    }

    /** The kind. */
    public Kind kind() {
        return kind;
    }

    /** The integer value. @throws IllegalStateException if this is not an INT */
    public long asLong() {
        check(Kind.INT);
        return ints[0];
    }

    /** The float value (an INT converts). @throws IllegalStateException for other kinds */
    public double asDouble() {
        if (kind == Kind.INT) {
            return ints[0];
        }
        check(Kind.FLOAT);
        return floats[0];
    }

    /** The string value. @throws IllegalStateException if this is not a STRING */
    public String asString() {
        check(Kind.STRING);
        return strings.get(0);
    }

    /** The integer list (a copy); an INT gives a one-element list. @throws IllegalStateException for other kinds */
    public long[] asLongs() {
        Checks.state(kind == Kind.INTS || kind == Kind.INT, "attribute is %s, not INTS", kind);
        return ints.clone();
    }

    /** The float list (a copy). @throws IllegalStateException for other kinds */
    public double[] asDoubles() {
        Checks.state(kind == Kind.FLOATS || kind == Kind.FLOAT, "attribute is %s, not FLOATS", kind);
        return floats.clone();
    }

    /** The string list. @throws IllegalStateException for other kinds */
    public List<String> asStrings() {
        Checks.state(kind == Kind.STRINGS || kind == Kind.STRING, "attribute is %s, not STRINGS", kind);
        return strings;
    }

    /**
     * The tensor value.
     *
     * @throws IllegalStateException if this is not a TENSOR, or a large tensor kept without its values
     */
    public TensorValue asTensor() {
        check(Kind.TENSOR);
        Checks.state(tensor != null, "tensor attribute of %s elements was not decoded",
                Arrays.toString(ints));
        return tensor;
    }

    /** The tensor value, empty for a large tensor kept without values. @throws IllegalStateException if not a TENSOR */
    public Optional<TensorValue> tensorValue() {
        check(Kind.TENSOR);
        return Optional.ofNullable(tensor);
    }

    /** The element type of a tensor attribute. @throws IllegalStateException if this is not a TENSOR */
    public DataType tensorType() {
        check(Kind.TENSOR);
        return tensorType;
    }

    /** The dimensions of a tensor attribute (a copy). @throws IllegalStateException if this is not a TENSOR */
    public long[] tensorDims() {
        check(Kind.TENSOR);
        return tensor != null ? tensor.dims() : ints.clone();
    }

    private void check(Kind expected) {
        Checks.state(kind == expected, "attribute is %s, not %s", kind, expected);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Attribute a && a.kind == kind && Arrays.equals(a.ints, ints)
                && Arrays.equals(a.floats, floats) && a.strings.equals(strings) && Objects.equals(a.tensor, tensor)
                && a.tensorType == tensorType;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, Arrays.hashCode(ints), Arrays.hashCode(floats), strings, tensor);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case INT -> Long.toString(ints[0]);
            case FLOAT -> Double.toString(floats[0]);
            case STRING -> strings.get(0);
            case INTS -> Arrays.toString(ints);
            case FLOATS -> Arrays.toString(floats);
            case STRINGS -> strings.toString();
            case TENSOR -> tensor != null ? tensor.toString() : tensorType + Arrays.toString(ints) + "(not decoded)";
            case GRAPH -> "<graph>";
        };
    }
}
