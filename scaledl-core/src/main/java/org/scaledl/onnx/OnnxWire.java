package org.scaledl.onnx;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.DataType;
import org.scaledl.graph.TensorValue;

/**
 * Reads the parts of an ONNX {@code ModelProto} that the importer needs, straight from the protobuf wire format with
 * {@link CodedInputStream}. Field numbers are those of the public {@code onnx.proto}; unknown fields are skipped.
 * Every length is checked against the bytes that remain before anything is allocated, so truncated or hostile files
 * fail with {@link InvalidProtocolBufferException}, never an {@link OutOfMemoryError}. Sub-graphs of control-flow
 * attributes are not descended into (kept as {@link Attribute.Kind#GRAPH}), so nesting depth is bounded.
 *
 * <p>The work is linear in the file's size: every field is read once, a tensor's rank is capped at
 * {@link #MAX_RANK}, and names are escaped ({@link Names}) as they are read. Content that is well-formed protobuf but
 * impossible ONNX (too many dimensions, data that contradicts the dims) is a {@link ContentProblem} naming the tensor
 * and, for a node's attribute, the node; it is raised once the enclosing message has been read, so that the node's
 * name (which may follow its attributes) is known.
 *
 * <p>Tensors stored outside the file ({@code data_location = EXTERNAL}, {@code external_data} entries) are accepted
 * without opening the external file: shapes do not need the values. Only a declared {@code length} is checked
 * against the dims.
 */
final class OnnxWire {
    /** Largest tensor whose values are decoded; bigger ones keep only type and dims. */
    static final int MAX_DECODED_ELEMENTS = 1 << 16;
    /** Most dimensions a tensor may have (ONNX Runtime supports far fewer in its kernels). */
    static final int MAX_RANK = 64;
    /** {@code TensorProto.DataLocation.EXTERNAL}. */
    private static final int EXTERNAL = 1;

    private final Names names = new Names();

    private OnnxWire() {
    }

    /**
     * ONNX content that contradicts itself or the importer's limits, in a well-formed protobuf: names the tensor
     * and, once known, the node.
     */
    static final class ContentProblem extends IOException {
        private static final long serialVersionUID = 1L;

        private final String tensor;
        private final String node;

        ContentProblem(String message, String tensor) {
            this(message, tensor, null);
        }

        private ContentProblem(String message, String tensor, String node) {
            super(message);
            this.tensor = tensor;
            this.node = node;
        }

        /** The same problem, located at a node. */
        ContentProblem atNode(String nodeName) {
            return node != null ? this : new ContentProblem(getMessage(), tensor, nodeName);
        }

        Optional<String> node() {
            return Optional.ofNullable(node);
        }

        Optional<String> tensor() {
            return Optional.ofNullable(tensor);
        }
    }

    record Dimension(long value, String param) {
        boolean isKnown() {
            return param == null && value >= 0;
        }
    }

    /** A {@code ValueInfoProto} of a tensor type; dims empty when the shape is absent. */
    record ValueInfo(String name, int elemType, boolean hasShape, List<Dimension> dims) {
    }

    /**
     * A {@code TensorProto}: dims, type and, when small and present, the values. {@code problem} is empty when the
     * data the tensor carries (inline, in any of the typed fields or raw bytes, or stored externally) has as many
     * elements as its dims say, whether or not the values were decoded, and says what is wrong otherwise.
     * {@code external} says that the data lies in another file (never opened).
     */
    record Tensor(String name, int dataType, long[] dims, Optional<TensorValue> value, boolean external,
            Optional<String> problem) {
        boolean wellFormed() {
            return problem.isEmpty();
        }
    }

    record Node(String name, String opType, String domain, List<String> inputs, List<String> outputs,
            Map<String, Attribute> attributes) {
    }

    record Graph(String name, List<Node> nodes, List<Tensor> initializers, List<ValueInfo> inputs,
            List<ValueInfo> outputs, List<ValueInfo> valueInfo) {
    }

    record Model(long irVersion, long opset, String producer, Graph graph) {
    }

    /**
     * Parses a serialized {@code ModelProto}.
     *
     * @throws ContentProblem for impossible content, naming the tensor and node
     * @throws IOException    for bytes that are not a {@code ModelProto}
     */
    static Model parseModel(byte[] bytes) throws IOException {
        return new OnnxWire().model(CodedInputStream.newInstance(bytes));
    }

    private Model model(CodedInputStream in) throws IOException {
        long ir = 0;
        long opset = -1;
        String producer = "";
        Graph graph = null;
        int tag;
        while ((tag = in.readTag()) != 0) {
            switch (WireFormat.getTagFieldNumber(tag)) {
                case 1 -> ir = in.readInt64();
                case 2 -> producer = Names.escape(in.readString());
                case 7 -> {
                    checkWire(tag, WireFormat.WIRETYPE_LENGTH_DELIMITED, "ModelProto.graph");
                    int old = enter(in);
                    graph = parseGraph(in);
                    in.popLimit(old);
                }
                case 8 -> {
                    checkWire(tag, WireFormat.WIRETYPE_LENGTH_DELIMITED, "ModelProto.opset_import");
                    int old = enter(in);
                    String domain = "";
                    long version = -1;
                    int t;
                    while ((t = in.readTag()) != 0) {
                        switch (WireFormat.getTagFieldNumber(t)) {
                            case 1 -> domain = in.readString();
                            case 2 -> version = in.readInt64();
                            default -> in.skipField(t);
                        }
                    }
                    in.popLimit(old);
                    if (domain.isEmpty() || domain.equals("ai.onnx")) {
                        opset = version;
                    }
                }
                default -> in.skipField(tag);
            }
        }
        if (graph == null) {
            throw new InvalidProtocolBufferException("no graph in ModelProto (is this an ONNX model file?)");
        }
        return new Model(ir, opset, producer, graph);
    }

    private static void checkWire(int tag, int expected, String field) throws InvalidProtocolBufferException {
        if (WireFormat.getTagWireType(tag) != expected) {
            throw new InvalidProtocolBufferException("wrong wire type for " + field);
        }
    }

    /** Reads a length prefix and pushes it as the limit; fails when it runs past the enclosing message. */
    private static int enter(CodedInputStream in) throws IOException {
        int len = in.readRawVarint32();
        if (len < 0) {
            throw new InvalidProtocolBufferException("negative length " + len);
        }
        if (len > in.getBytesUntilLimit() && in.getBytesUntilLimit() >= 0) {
            throw new InvalidProtocolBufferException(
                    "declared length " + len + " exceeds the " + in.getBytesUntilLimit() + " bytes left");
        }
        return in.pushLimit(len);
    }

    private Graph parseGraph(CodedInputStream in) throws IOException {
        String name = "";
        List<Node> nodes = new ArrayList<>();
        List<Tensor> inits = new ArrayList<>();
        List<ValueInfo> inputs = new ArrayList<>();
        List<ValueInfo> outputs = new ArrayList<>();
        List<ValueInfo> valueInfo = new ArrayList<>();
        int tag;
        while ((tag = in.readTag()) != 0) {
            int field = WireFormat.getTagFieldNumber(tag);
            if (field == 2) {
                name = Names.escape(in.readString());
                continue;
            }
            if (field != 1 && field != 5 && field != 11 && field != 12 && field != 13) {
                in.skipField(tag);
                continue;
            }
            checkWire(tag, WireFormat.WIRETYPE_LENGTH_DELIMITED, "GraphProto field " + field);
            int old = enter(in);
            switch (field) {
                case 1 -> nodes.add(parseNode(in, nodes.size()));
                case 5 -> inits.add(parseTensor(in, true));
                case 11 -> inputs.add(parseValueInfo(in));
                case 12 -> outputs.add(parseValueInfo(in));
                default -> valueInfo.add(parseValueInfo(in));
            }
            in.popLimit(old);
        }
        return new Graph(name, nodes, inits, inputs, outputs, valueInfo);
    }

    /**
     * Parses a {@code NodeProto}; {@code index} is its position in the graph, which names an unnamed node in errors
     * as the importer does ({@code Conv_3}).
     */
    private Node parseNode(CodedInputStream in, int index) throws IOException {
        List<String> inputs = new ArrayList<>();
        List<String> outputs = new ArrayList<>();
        String name = "";
        String op = "";
        String domain = "";
        Map<String, Attribute> attrs = new LinkedHashMap<>();
        ContentProblem problem = null;
        int tag;
        while ((tag = in.readTag()) != 0) {
            switch (WireFormat.getTagFieldNumber(tag)) {
                case 1 -> inputs.add(names.identifier(in.readString()));
                case 2 -> outputs.add(names.identifier(in.readString()));
                case 3 -> name = names.identifier(in.readString());
                case 4 -> op = Names.escape(in.readString());
                case 7 -> domain = Names.escape(in.readString());
                case 5 -> {
                    checkWire(tag, WireFormat.WIRETYPE_LENGTH_DELIMITED, "NodeProto.attribute");
                    int old = enter(in);
                    try {
                        parseAttribute(in, attrs);
                    } catch (ContentProblem p) {
                        // raised at the attribute's end: read on to learn the node's name
                        problem = problem == null ? p : problem;
                    }
                    in.popLimit(old);
                }
                default -> in.skipField(tag);
            }
        }
        if (problem != null) {
            throw problem.atNode(name.isEmpty() ? (op.isEmpty() ? "node" : op) + "_" + index : name);
        }
        return new Node(name, op, domain, inputs, outputs, attrs);
    }

    private void parseAttribute(CodedInputStream in, Map<String, Attribute> out) throws IOException {
        String name = "";
        int type = 0;
        Double f = null;
        Long i = null;
        String s = null;
        TensorValue t = null;
        Attribute large = null;
        String problem = null;
        String problemTensor = null;
        boolean graph = false;
        List<Long> ints = new ArrayList<>();
        List<Double> floats = new ArrayList<>();
        List<String> strings = new ArrayList<>();
        int tag;
        while ((tag = in.readTag()) != 0) {
            int field = WireFormat.getTagFieldNumber(tag);
            int wire = WireFormat.getTagWireType(tag);
            switch (field) {
                case 1 -> name = Names.escape(in.readString());
                case 20 -> type = in.readInt32();
                case 2 -> f = (double) in.readFloat();
                case 3 -> i = in.readInt64();
                case 4 -> s = Names.escape(in.readBytes().toStringUtf8());
                case 5 -> {
                    int old = enter(in);
                    Tensor tensor = parseTensor(in, false);
                    in.popLimit(old);
                    problemTensor = tensor.name();
                    if (tensor.problem().isPresent()) {
                        problem = tensor.problem().get();
                    } else if (tensor.value().isPresent()) {
                        t = tensor.value().get();
                    } else if (DataType.fromOnnx(tensor.dataType()).isPresent()) {
                        large = Attribute.ofLargeTensor(DataType.fromOnnx(tensor.dataType()).get(), tensor.dims());
                    } else {
                        problem = "unknown element type " + tensor.dataType();
                    }
                }
                case 6, 11 -> {
                    graph = true;
                    in.skipField(tag);
                }
                case 7 -> {
                    if (wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                        int old = enter(in);
                        while (in.getBytesUntilLimit() > 0) {
                            floats.add((double) in.readFloat());
                        }
                        in.popLimit(old);
                    } else {
                        floats.add((double) in.readFloat());
                    }
                }
                case 8 -> {
                    if (wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                        int old = enter(in);
                        while (in.getBytesUntilLimit() > 0) {
                            ints.add(in.readInt64());
                        }
                        in.popLimit(old);
                    } else {
                        ints.add(in.readInt64());
                    }
                }
                case 9 -> strings.add(Names.escape(in.readBytes().toStringUtf8()));
                default -> in.skipField(tag);
            }
        }
        if (problem != null) {
            // raised here, not in the loop: the attribute's name may follow its tensor
            throw new ContentProblem("tensor attribute '" + name + "'"
                    + (problemTensor.isEmpty() ? "" : " (tensor '" + problemTensor + "')") + ": " + problem,
                    problemTensor.isEmpty() ? null : problemTensor);
        }
        Attribute a;
        switch (type) {
            case 1 -> a = Attribute.ofFloat(f == null ? 0.0 : f);
            case 2 -> a = Attribute.ofInt(i == null ? 0 : i);
            case 3 -> a = Attribute.ofString(s == null ? "" : s);
            case 4 -> {
                if (t == null && large == null) {
                    throw new InvalidProtocolBufferException("tensor attribute '" + name + "' has no tensor");
                }
                a = t != null ? Attribute.ofTensor(t) : large;
            }
            case 5, 10 -> a = Attribute.ofGraph();
            case 6 -> a = Attribute.ofFloats(floats.stream().mapToDouble(Double::doubleValue).toArray());
            case 7 -> a = Attribute.ofInts(ints.stream().mapToLong(Long::longValue).toArray());
            case 8 -> a = Attribute.ofStrings(strings);
            default -> {
                // Old files may omit the type: infer it from the field that is set.
                if (t != null) {
                    a = Attribute.ofTensor(t);
                } else if (large != null) {
                    a = large;
                } else if (i != null) {
                    a = Attribute.ofInt(i);
                } else if (f != null) {
                    a = Attribute.ofFloat(f);
                } else if (s != null) {
                    a = Attribute.ofString(s);
                } else if (!ints.isEmpty()) {
                    a = Attribute.ofInts(ints.stream().mapToLong(Long::longValue).toArray());
                } else if (!floats.isEmpty()) {
                    a = Attribute.ofFloats(floats.stream().mapToDouble(Double::doubleValue).toArray());
                } else if (!strings.isEmpty()) {
                    a = Attribute.ofStrings(strings);
                } else if (graph) {
                    a = Attribute.ofGraph();
                } else {
                    return;
                }
            }
        }
        if (!name.isEmpty()) {
            out.put(name, a);
        }
    }

    private ValueInfo parseValueInfo(CodedInputStream in) throws IOException {
        String name = "";
        int elem = 0;
        boolean hasShape = false;
        List<Dimension> dims = new ArrayList<>();
        long[] rank = {0};
        int tag;
        while ((tag = in.readTag()) != 0) {
            int field = WireFormat.getTagFieldNumber(tag);
            if (field == 1) {
                name = names.identifier(in.readString());
            } else if (field == 2 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                int oldType = enter(in);
                int t;
                while ((t = in.readTag()) != 0) {
                    if (WireFormat.getTagFieldNumber(t) == 1
                            && WireFormat.getTagWireType(t) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                        int oldTensor = enter(in);
                        int u;
                        while ((u = in.readTag()) != 0) {
                            int f = WireFormat.getTagFieldNumber(u);
                            if (f == 1) {
                                elem = in.readInt32();
                            } else if (f == 2 && WireFormat.getTagWireType(u) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                                hasShape = true;
                                int oldShape = enter(in);
                                parseShape(in, dims, rank);
                                in.popLimit(oldShape);
                            } else {
                                in.skipField(u);
                            }
                        }
                        in.popLimit(oldTensor);
                    } else {
                        in.skipField(t);
                    }
                }
                in.popLimit(oldType);
            } else {
                in.skipField(tag);
            }
        }
        if (rank[0] > MAX_RANK) {
            throw new ContentProblem("tensor '" + name + "' has " + rank[0] + " dimensions, more than the "
                    + MAX_RANK + " the importer accepts", name);
        }
        return new ValueInfo(name, elem, hasShape, dims);
    }

    /** Reads dimensions into {@code dims}, at most {@link #MAX_RANK} of them, counting all in {@code rank[0]}. */
    private void parseShape(CodedInputStream in, List<Dimension> dims, long[] rank) throws IOException {
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (WireFormat.getTagFieldNumber(tag) != 1
                    || WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                in.skipField(tag);
                continue;
            }
            int old = enter(in);
            long value = -1;
            String param = null;
            int t;
            while ((t = in.readTag()) != 0) {
                switch (WireFormat.getTagFieldNumber(t)) {
                    case 1 -> value = in.readInt64();
                    case 2 -> param = Names.escape(in.readString());
                    default -> in.skipField(t);
                }
            }
            in.popLimit(old);
            if (++rank[0] <= MAX_RANK) {
                dims.add(new Dimension(value, param));
            }
        }
    }

    /**
     * Parses a {@code TensorProto}; values are decoded only for small tensors with inline data. Problems with its
     * content are returned in {@link Tensor#problem()}, once the whole message has been read.
     *
     * @param identifier whether the tensor's name is a graph-wide name (an initializer), checked for collisions
     */
    private Tensor parseTensor(CodedInputStream in, boolean identifier) throws IOException {
        String name = "";
        int dataType = 0;
        List<Long> dims = new ArrayList<>();
        long[] rank = {0};
        byte[] raw = null;
        long rawLength = -1;
        List<Double> floatData = new ArrayList<>();
        List<Long> intData = new ArrayList<>();
        long floatCount = 0;
        long[] intCount = {0};
        int location = 0;
        int externalEntries = 0;
        String externalLength = null;
        int tag;
        while ((tag = in.readTag()) != 0) {
            int field = WireFormat.getTagFieldNumber(tag);
            boolean packed = WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
            switch (field) {
                case 1 -> readLongs(in, packed, dims, MAX_RANK, rank);
                case 2 -> dataType = in.readInt32();
                case 8 -> name = identifier ? names.identifier(in.readString()) : Names.escape(in.readString());
                case 9 -> {
                    int len = in.readRawVarint32();
                    if (len < 0 || (in.getBytesUntilLimit() >= 0 && len > in.getBytesUntilLimit())) {
                        throw new InvalidProtocolBufferException("raw_data length " + len + " runs past the tensor");
                    }
                    rawLength = len;
                    if (len <= MAX_DECODED_ELEMENTS * 16) {
                        raw = in.readRawBytes(len);
                    } else {
                        in.skipRawBytes(len);
                    }
                }
                case 4, 10 -> {
                    int width = field == 4 ? 4 : 8;
                    if (packed) {
                        int old = enter(in);
                        int bytes = in.getBytesUntilLimit();
                        if (bytes % width != 0) {
                            throw new InvalidProtocolBufferException("packed " + (width == 4 ? "float" : "double")
                                    + "_data of " + bytes + " bytes is not a whole number of values");
                        }
                        floatCount += bytes / width;
                        while (in.getBytesUntilLimit() > 0 && floatData.size() <= MAX_DECODED_ELEMENTS) {
                            floatData.add(width == 4 ? (double) in.readFloat() : in.readDouble());
                        }
                        in.skipRawBytes(in.getBytesUntilLimit());
                        in.popLimit(old);
                    } else {
                        floatCount++;
                        if (floatData.size() <= MAX_DECODED_ELEMENTS) {
                            floatData.add(width == 4 ? (double) in.readFloat() : in.readDouble());
                        } else {
                            in.skipField(tag);
                        }
                    }
                }
                case 5, 7, 11 -> readLongs(in, packed, intData, MAX_DECODED_ELEMENTS, intCount);
                case 13 -> {
                    // external_data: repeated StringStringEntryProto {key = 1, value = 2}
                    checkWire(tag, WireFormat.WIRETYPE_LENGTH_DELIMITED, "TensorProto.external_data");
                    int old = enter(in);
                    String key = "";
                    String value = "";
                    int t;
                    while ((t = in.readTag()) != 0) {
                        switch (WireFormat.getTagFieldNumber(t)) {
                            case 1 -> key = in.readString();
                            case 2 -> value = in.readString();
                            default -> in.skipField(t);
                        }
                    }
                    in.popLimit(old);
                    externalEntries++;
                    if (key.equals("length")) {
                        externalLength = value;
                    }
                }
                case 14 -> {
                    checkWire(tag, WireFormat.WIRETYPE_VARINT, "TensorProto.data_location");
                    location = in.readInt32();
                }
                default -> in.skipField(tag);
            }
        }
        if (rank[0] > MAX_RANK) {
            return new Tensor(name, dataType, new long[0], Optional.empty(), false, Optional.of("tensor '" + name
                    + "' has " + rank[0] + " dimensions, more than the " + MAX_RANK + " the importer accepts"));
        }
        long[] d = dims.stream().mapToLong(Long::longValue).toArray();
        long count = 1;
        for (long x : d) {
            if (x < 0) {
                return new Tensor(name, dataType, d, Optional.empty(), false,
                        Optional.of("negative dimension " + x + " in " + Arrays.toString(d)));
            }
            count = x == 0 ? 0 : (count > Long.MAX_VALUE / x ? Long.MAX_VALUE : count * x);
        }
        Optional<TensorValue> value = Optional.empty();
        Optional<DataType> type = DataType.fromOnnx(dataType);
        boolean inline = rawLength >= 0 || floatCount > 0 || intCount[0] > 0;
        boolean external = !inline && (location == EXTERNAL || externalEntries > 0);
        if (type.isPresent() && count <= MAX_DECODED_ELEMENTS && !external) {
            value = decode(type.get(), d, (int) count, raw, floatData, intData);
        }
        Optional<String> problem;
        if (value.isPresent()) {
            problem = Optional.empty();
        } else if (external) {
            problem = externalProblem(type, d, count, externalLength);
        } else if (rawLength >= 0 && type.isPresent() && type.get() != DataType.STRING
                && count <= Long.MAX_VALUE / Math.max(1, type.get().byteSize())
                && rawLength == count * type.get().byteSize()
                || rawLength < 0
                        && (floatCount == count && intCount[0] == 0 || intCount[0] == count && floatCount == 0)) {
            problem = Optional.empty();
        } else {
            problem = Optional.of("holds no data, or less or more than its dims " + Arrays.toString(d) + " say");
        }
        return new Tensor(name, dataType, d, value, external, problem);
    }

    /**
     * What is wrong with the declared size of external data, if anything: a declared {@code length} must be the
     * bytes the dims and element type need (two 4-bit elements to a byte). The external file is never opened.
     */
    private static Optional<String> externalProblem(Optional<DataType> type, long[] dims, long count,
            String declared) {
        if (type.isPresent() && type.get() == DataType.STRING) {
            return Optional.of("a STRING tensor cannot be stored as external data");
        }
        if (declared == null || type.isEmpty() || type.get() == DataType.UNDEFINED) {
            return Optional.empty();
        }
        long length;
        try {
            length = Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            return Optional.of("external data length '" + Names.escape(declared) + "' is not a number");
        }
        boolean nibbles = type.get() == DataType.INT4 || type.get() == DataType.UINT4;
        long size = type.get().byteSize();
        long need = nibbles ? count / 2 + count % 2 : count <= Long.MAX_VALUE / size ? count * size : -1;
        if (length != need) {
            return Optional.of("external data declares length " + length + " bytes, but dims "
                    + Arrays.toString(dims) + " of " + type.get() + " need "
                    + (need < 0 ? "more than 2^63" : Long.toString(need)));
        }
        return Optional.empty();
    }

    /** Reads varint values into {@code out} (at most {@code max}), counting all of them in {@code count[0]}. */
    private static void readLongs(CodedInputStream in, boolean packed, List<Long> out, long max, long[] count)
            throws IOException {
        if (packed) {
            int old = enter(in);
            while (in.getBytesUntilLimit() > 0) {
                long v = in.readInt64();
                if (out.size() < max) {
                    out.add(v);
                }
                if (count != null) {
                    count[0]++;
                }
            }
            in.popLimit(old);
        } else {
            long v = in.readInt64();
            if (out.size() < max) {
                out.add(v);
            }
            if (count != null) {
                count[0]++;
            }
        }
    }

    private static Optional<TensorValue> decode(DataType type, long[] dims, int count, byte[] raw,
            List<Double> floatData, List<Long> intData) {
        if (raw != null) {
            int size = type.byteSize();
            if ((long) count * size != raw.length || type == DataType.STRING) {
                return Optional.empty();
            }
            ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
            if (type.isFloating()) {
                double[] v = new double[count];
                for (int k = 0; k < count; k++) {
                    switch (type) {
                        case FLOAT -> v[k] = buf.getFloat();
                        case DOUBLE -> v[k] = buf.getDouble();
                        case FLOAT16 -> v[k] = halfToFloat(buf.getShort());
                        case BFLOAT16 -> v[k] = Float.intBitsToFloat((buf.getShort() & 0xffff) << 16);
                        default -> {
                            return Optional.empty();
                        }
                    }
                }
                return Optional.of(TensorValue.ofDoubles(type, dims, v));
            }
            if (!type.isIntegral()) {
                return Optional.empty();
            }
            long[] v = new long[count];
            for (int k = 0; k < count; k++) {
                v[k] = switch (size) {
                    case 1 -> type == DataType.UINT8 || type == DataType.BOOL ? buf.get() & 0xff : buf.get();
                    case 2 -> type == DataType.UINT16 ? buf.getShort() & 0xffff : buf.getShort();
                    case 4 -> type == DataType.UINT32 ? buf.getInt() & 0xffffffffL : buf.getInt();
                    default -> buf.getLong();
                };
            }
            return Optional.of(TensorValue.ofLongs(type, dims, v));
        }
        if (type.isFloating() && floatData.size() == count) {
            return Optional.of(TensorValue.ofDoubles(type, dims,
                    floatData.stream().mapToDouble(Double::doubleValue).toArray()));
        }
        if (type.isFloating() && type != DataType.FLOAT && type != DataType.DOUBLE && intData.size() == count) {
            double[] v = new double[count];
            for (int k = 0; k < count; k++) {
                short bits = (short) (long) intData.get(k);
                v[k] = type == DataType.FLOAT16 ? halfToFloat(bits)
                        : Float.intBitsToFloat((bits & 0xffff) << 16);
            }
            return Optional.of(TensorValue.ofDoubles(type, dims, v));
        }
        if (type.isIntegral() && intData.size() == count) {
            return Optional.of(TensorValue.ofLongs(type, dims, intData.stream().mapToLong(Long::longValue).toArray()));
        }
        return Optional.empty();
    }

    /** IEEE 754 half precision to float (Java 17 has no {@code Float.float16ToFloat}). */
    static float halfToFloat(short bits) {
        int h = bits & 0xffff;
        int sign = (h >>> 15) << 31;
        int exp = (h >>> 10) & 0x1f;
        int mant = h & 0x3ff;
        if (exp == 0) {
            float v = mant / 1024f * (float) Math.pow(2, -14);
            return sign == 0 ? v : -v;
        }
        if (exp == 31) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
        }
        return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
    }
}
