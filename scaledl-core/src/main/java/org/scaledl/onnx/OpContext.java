package org.scaledl.onnx;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.Layer;
import org.scaledl.graph.TensorValue;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/**
 * One node under inference, as the shape rules see it: the layer, its input values, the model's opset, and the
 * checks every rule shares (a required input, a known value, an axis in range, numpy broadcasting). Errors name the
 * file and the node.
 */
final class OpContext {
    private final String source;
    private final Layer node;
    private final List<Val> in;
    private final long opset;
    private final boolean valuesWithheld;

    /**
     * @param valuesWithheld whether the inputs' values were withheld because the import's value budget is spent
     *                       ({@link ImportWork}): a rule that needs them then reports why
     */
    OpContext(String source, Layer node, List<Val> in, long opset, boolean valuesWithheld) {
        this.source = source;
        this.node = node;
        this.in = in;
        this.opset = opset;
        this.valuesWithheld = valuesWithheld;
    }

    /** The layer being inferred. */
    Layer node() {
        return node;
    }

    /** The default-domain opset the model imports ({@link ShapeInference#LATEST_OPSET} when it declares none). */
    long opset() {
        return opset;
    }

    /** The input at {@code i} as given, {@code null} when omitted or unknown. */
    Val raw(int i) {
        return in.get(i);
    }

    /** A problem with this node's inputs or attributes, naming the file and the node. */
    InvalidInputException bad(String message) {
        return InvalidInputException.atNode(source, node.name(), node.opType() + ": " + message);
    }

    /** True when input {@code i} is given (present and not the empty name of an omitted optional input). */
    boolean has(int i) {
        return i < in.size() && i < node.inputs().size() && !node.inputs().get(i).isEmpty();
    }

    /** A required input. */
    Val input(int i) throws Unknown {
        if (!has(i)) {
            throw bad("required input " + i + " is missing");
        }
        Val v = in.get(i);
        if (v == null) {
            throw new Unknown("shape of input '" + node.inputs().get(i) + "' is unknown");
        }
        return v;
    }

    long[] shape(int i) throws Unknown {
        return input(i).shape();
    }

    /** The values of a required input, which must be known while importing. */
    TensorValue value(int i) throws Unknown {
        TensorValue v = input(i).value();
        if (v == null) {
            throw new Unknown("value of input '" + node.inputs().get(i) + "' is not known while importing"
                    + (valuesWithheld ? " (this file's budget for propagating values is spent)" : ""));
        }
        return v;
    }

    /** An integer list from the attribute, else from the input's values; {@code null} when neither is given. */
    long[] ints(String attr, int inputIndex) throws Unknown {
        Optional<Attribute> a = node.attribute(attr);
        if (a.isPresent()) {
            return a.get().asLongs();
        }
        if (inputIndex >= 0 && has(inputIndex)) {
            return value(inputIndex).longs();
        }
        return null;
    }

    /**
     * An integer list that is an attribute before {@code inputSince} and the input {@code inputIndex} from that opset
     * on: the form of this model's opset is read first, the other one when the first is absent (exporters that mix
     * the forms). {@code null} when neither is given.
     */
    long[] intsSince(long inputSince, String attr, int inputIndex) throws Unknown {
        if (opset >= inputSince && has(inputIndex)) {
            return value(inputIndex).longs();
        }
        return ints(attr, inputIndex);
    }

    long[] longsAttr(String attr, long[] def) {
        return node.attribute(attr).map(Attribute::asLongs).orElse(def);
    }

    String stringAttr(String attr, String def) {
        return node.attribute(attr).map(Attribute::asString).orElse(def);
    }

    /** An axis in {@code [-rank, rank)}, normalized. */
    int axis(long a, int rank) {
        long r = a < 0 ? a + rank : a;
        if (r < 0 || r >= rank) {
            throw bad("axis " + a + " out of range for rank " + rank);
        }
        return (int) r;
    }

    /** True when a tensor of this shape has at most {@link ShapeInference#MAX_TRACKED} elements. */
    static boolean small(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0 || n != 0 && d > ShapeInference.MAX_TRACKED) {
                return false;
            }
            n *= d;
            if (n > ShapeInference.MAX_TRACKED) {
                return false;
            }
        }
        return true;
    }

    /** Numpy broadcasting of two shapes. */
    long[] broadcast(long[] a, long[] b) {
        int r = Math.max(a.length, b.length);
        long[] out = new long[r];
        for (int i = 0; i < r; i++) {
            long x = i - (r - a.length) >= 0 ? a[i - (r - a.length)] : 1;
            long y = i - (r - b.length) >= 0 ? b[i - (r - b.length)] : 1;
            if (x != y && x != 1 && y != 1) {
                throw bad("cannot broadcast " + Arrays.toString(a) + " with " + Arrays.toString(b));
            }
            out[i] = x == 1 ? y : x;
        }
        return out;
    }

    /** Index into a broadcast operand for a flat output position. */
    static int bindex(long[] outShape, long[] shape, int flat) {
        int idx = 0;
        int stride = 1;
        int off = outShape.length - shape.length;
        int rem = flat;
        long[] coord = new long[outShape.length];
        for (int d = outShape.length - 1; d >= 0; d--) {
            coord[d] = rem % outShape[d];
            rem /= (int) outShape[d];
        }
        for (int d = shape.length - 1; d >= 0; d--) {
            long c = shape[d] == 1 ? 0 : coord[d + off];
            idx += (int) c * stride;
            stride *= (int) shape[d];
        }
        return idx;
    }

    void checkDims(long[] shape) {
        for (long d : shape) {
            if (d < 0) {
                throw bad("negative dimension in output shape " + Arrays.toString(shape));
            }
        }
    }

    /** The same values under a new shape of as many elements. */
    static Val reshaped(Val x, long[] out) {
        TensorValue v = null;
        if (x.value() != null) {
            v = x.type().isFloating() ? TensorValue.ofDoubles(x.type(), out, x.value().doubles())
                    : TensorValue.ofLongs(x.type(), out, x.value().longs());
        }
        return new Val(x.type(), out, v);
    }
}
