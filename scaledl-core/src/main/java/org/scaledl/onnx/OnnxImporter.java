package org.scaledl.onnx;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.Dim;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorRole;

/**
 * Reads an ONNX model file into a {@link ModelGraph}, inferring every tensor's shape itself.
 *
 * <pre>{@code
 * ModelGraph g = OnnxImporter.read(Path.of("resnet50_r112.onnx"));
 * long params = g.parameterCount();   // equals PyTorch's sum(p.numel())
 * }</pre>
 *
 * <p><b>Inputs and weights.</b> A graph input with a symbolic (or unknown) dimension is a data input
 * ({@link TensorRole#INPUT}). Its batch is its <em>leading</em> axis, or a dimension named as the batch
 * ({@code batch}, {@code batch_size}) at another axis (a time-major sequence); any other symbolic dimension, such as
 * the {@code H} of an {@code [1, 3, H, W]} image, must be bound with {@link Options.Builder#dim} ({@code --dim H=224}
 * on the command line), and a fixed leading axis is then the batch as {@link FixedBatch} says. If no input is
 * symbolic, the first non-initializer input is the data input. All other inputs and all initializers are weights:
 * floating-point ones are {@link TensorRole#PARAMETER}s except BatchNormalization running statistics and rank-0
 * initializers; integral ones are {@link TensorRole#BUFFER}s. So graph-only exports ({@code export_params=False})
 * and exports with initializers give the same parameter count. Weights stored as external data are accepted without
 * opening their file.
 *
 * <p><b>Shapes.</b> {@code value_info} is not trusted: shapes (and the values of small integer tensors, so that
 * {@code Shape -> Gather -> Concat -> Reshape} chains resolve) are inferred per operator, in the form of the model's
 * opset, at batch sizes 2 and 3 and checked at 7, giving dimensions affine in the batch. The supported operators are
 * listed in {@link #supportedOperators()}. A node of any other operator is kept (never dropped) with a logged
 * warning; its output shapes come from {@code value_info} when present and are otherwise unknown, as are the shapes
 * downstream. An opset newer than the importer knows, and half-precision weights, are logged and noted in
 * {@link Coverage#notes()}.
 *
 * <p><b>Hostile input.</b> Truncated files, absurd lengths, cycles, dangling tensors, more than
 * {@value OnnxWire#MAX_RANK} dimensions and sizes past 2<sup>63</sup> raise {@link InvalidInputException} naming the
 * file (and node and tensor); the parser never allocates more than the file's size, reads at most
 * {@link Options#maxFileBytes()} from any file (a device or pipe included), and its work is linear in the file's
 * size. Names are escaped as they are read (<code>&#92;u001b</code> for an escape character), so that printing them
 * cannot forge or hide output lines; the escaped name is the name that lookups use.
 */
public final class OnnxImporter {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OnnxImporter.class);

    /** The most bytes read from a file by default: protobuf's limit on a message (2 GiB). */
    public static final long DEFAULT_MAX_FILE_BYTES = Integer.MAX_VALUE - 16;

    private OnnxImporter() {
    }

    /**
     * Reads an ONNX file; the graph is named after the file (without {@code .onnx}).
     *
     * @throws InvalidInputException if the file cannot be read or is not a valid model
     */
    public static ModelGraph read(Path path) {
        return read(path, Options.defaults());
    }

    /**
     * Reads an ONNX file with options (named dimensions, the fixed-batch policy, the size cap).
     *
     * @throws InvalidInputException if the file cannot be read, is larger than {@link Options#maxFileBytes()} or is
     *         not a valid model, or a symbolic dimension other than the batch is not bound (the message lists the
     *         names to bind)
     */
    public static ModelGraph read(Path path, Options options) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        byte[] bytes = readBytes(path, options.maxFileBytes());
        String name = path.getFileName().toString().replaceFirst("\\.onnx$", "");
        return read(bytes, name, path.toString(), options);
    }

    /**
     * Reads an ONNX model from memory.
     *
     * @param bytes  the serialized {@code ModelProto}
     * @param name   the graph's name
     * @param source what to call the bytes in error messages (a file name)
     * @throws InvalidInputException if the bytes are not a valid model
     */
    public static ModelGraph read(byte[] bytes, String name, String source) {
        return read(bytes, name, source, Options.defaults());
    }

    /**
     * Reads an ONNX model from memory with options.
     *
     * @throws InvalidInputException if the bytes are not a valid model or a named dimension is not bound
     */
    public static ModelGraph read(byte[] bytes, String name, String source, Options options) {
        return readCounted(bytes, name, source, options).graph();
    }

    /**
     * Warns of a bound dimension ({@link Options#dimensions()}) that the graph's inputs, outputs and value infos never
     * name: a misspelt {@code --dim sq=128} would otherwise leave the model at another size without a word (a warning,
     * not a refusal: one binding serves a table of graphs, some of which need not have it).
     */
    private static void warnOfUnusedDimensions(OnnxWire.Model model, Options options, String file) {
        if (options.dimensions().isEmpty()) {
            return;
        }
        java.util.Set<String> named = new java.util.TreeSet<>();
        OnnxWire.Graph g = model.graph();
        for (List<OnnxWire.ValueInfo> vs : List.of(g.inputs(), g.outputs(), g.valueInfo())) {
            for (OnnxWire.ValueInfo v : vs) {
                if (v.hasShape()) {
                    for (OnnxWire.Dimension d : v.dims()) {
                        if (!d.isKnown() && d.param() != null && !d.param().isEmpty()) {
                            named.add(d.param());
                        }
                    }
                }
            }
        }
        for (String k : new java.util.TreeSet<>(options.dimensions().keySet())) {
            if (!named.contains(k)) {
                LOG.warn("{}: no input or output names a dimension '{}': its binding is not used{}", file,
                        Names.escape(k), named.isEmpty() ? " (the graph names none)" : " (it names "
                        + Names.escape(String.join(", ", named)) + ")");
            }
        }
    }

    /** A graph and the {@linkplain ImportWork steps} its import took. */
    record Counted(ModelGraph graph, long steps) {
    }

    /** {@link #read(byte[], String, String, Options)}, counting the work. */
    static Counted readCounted(byte[] bytes, String name, String source, Options options) {
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(options, "options");
        String file = Names.escape(Objects.requireNonNull(source, "source"));
        OnnxWire.Model model = parse(bytes, file);
        warnOfUnusedDimensions(model, options, file);
        ImportWork work = new ImportWork(bytes.length);
        try {
            ModelGraph g = new Conversion(model, Names.escape(name), file, options, work).run();
            return new Counted(g, work.steps());
        } catch (InvalidInputException e) {
            throw e;
        } catch (RuntimeException e) {
            // A structurally valid protobuf whose content contradicts ONNX (an attribute of the wrong kind, an
            // impossible tensor): report it as bad input, never as an internal failure.
            throw InvalidInputException.wrap(file, "invalid ONNX content: " + e, e);
        }
    }

    /**
     * The symbol of the file's batch dimension, as the import takes it (a data input's dimension named like a batch,
     * else the first data input's first symbolic dimension); empty where every input's shape is fixed.
     */
    public static Optional<String> batchSymbol(Path path) {
        OnnxWire.Model model = parse(readBytes(path, DEFAULT_MAX_FILE_BYTES), Names.escape(path.toString()));
        return batchSymbol(model.graph()).filter(b -> !b.isEmpty());
    }

    private static Optional<String> batchSymbol(OnnxWire.Graph g) {
        return DataInputs.batchSymbol(DataInputs.symbolicInputs(g.inputs()));
    }

    /**
     * The shapes the file itself declares in {@code value_info}, graph inputs and outputs, with dimensions named like
     * the batch symbol mapped to {@link Dim#batch()}. Tensors with any other symbolic dimension are left out. Meant
     * for cross-checking the importer's own inference.
     */
    public static Map<String, SymbolicShape> declaredShapes(Path path) {
        OnnxWire.Model model = parse(readBytes(path, DEFAULT_MAX_FILE_BYTES), Names.escape(path.toString()));
        OnnxWire.Graph g = model.graph();
        String batch = batchSymbol(g).orElse("batch");
        Map<String, SymbolicShape> out = new LinkedHashMap<>();
        List<OnnxWire.ValueInfo> all = new ArrayList<>(g.inputs());
        all.addAll(g.valueInfo());
        all.addAll(g.outputs());
        outer:
        for (OnnxWire.ValueInfo v : all) {
            if (!v.hasShape()) {
                continue;
            }
            List<Dim> dims = new ArrayList<>();
            for (OnnxWire.Dimension d : v.dims()) {
                if (d.isKnown()) {
                    dims.add(Dim.of(d.value()));
                } else if (batch.equals(d.param())) {
                    dims.add(Dim.batch());
                } else {
                    continue outer;
                }
            }
            out.put(v.name(), SymbolicShape.of(dims));
        }
        return out;
    }

    /** Operator types whose shapes (and FLOPs) the importer infers. */
    public static List<String> supportedOperators() {
        return ShapeInference.SUPPORTED;
    }

    /**
     * The file's bytes, at most {@code cap} of them: a regular file's size is checked first, and anything else (a
     * device such as {@code /dev/zero}, a pipe) is read through a bounded stream, never past the cap.
     */
    static byte[] readBytes(Path path, long cap) {
        String file = Names.escape(path.toString());
        try (InputStream in = org.scaledl.InputFiles.open(path)) {
            byte[] head = new byte[0];
            if (Files.isRegularFile(path)) {
                long size = Files.size(path);
                if (size > cap) {
                    throw tooLarge(file, "file of " + size + " bytes is larger", cap);
                }
                head = new byte[(int) size];
                int n = in.readNBytes(head, 0, head.length);
                head = n == head.length ? head : java.util.Arrays.copyOf(head, n);
            }
            // A device, a pipe, or a file that grew: what is left, one byte past the cap at most, and never more
            // than a quarter of the heap (a stream's length is not known before it is read: /dev/zero never ends)
            long streamCap = Math.min(cap, Math.max(1 << 20, Runtime.getRuntime().maxMemory() / 4));
            byte[] rest = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, streamCap - head.length + 1));
            if (head.length + (long) rest.length > streamCap) {
                throw tooLarge(file, "reads more bytes (a device or pipe, or a growing file)", streamCap);
            }
            if (rest.length == 0) {
                return head;
            }
            byte[] all = java.util.Arrays.copyOf(head, head.length + rest.length);
            System.arraycopy(rest, 0, all, head.length, rest.length);
            return all;
        } catch (IOException e) {
            throw InvalidInputException.unreadable(Path.of(file), "cannot read", e);
        }
    }

    private static InvalidInputException tooLarge(String file, String what, long cap) {
        return InvalidInputException.inSource(file, what + " than the cap of " + cap + " bytes "
                + "(OnnxImporter.Options.maxFileBytes); a model over 2 GiB keeps its weights as external data");
    }

    private static OnnxWire.Model parse(byte[] bytes, String source) {
        try {
            return OnnxWire.parseModel(bytes);
        } catch (OnnxWire.ContentProblem p) {
            return p.node().isPresent() ? throwAt(InvalidInputException.atNode(source, p.node().get(),
                    p.getMessage())) : throwAt(InvalidInputException.inSource(source, p.getMessage()));
        } catch (IOException | RuntimeException e) {
            if (json(bytes)) {
                throw InvalidInputException.wrap(source, "not an ONNX model but JSON: a Hugging Face config.json is "
                        + "a transformer's configuration, read with --transformer config.json --seq N (API: "
                        + "HuggingFaceConfig.read(path).graph(seq); CLI: --transformer config.json --seq N)", e);
            }
            throw InvalidInputException.wrap(source, "not a valid ONNX model: " + e.getMessage(), e);
        }
    }

    /**
     * Whether the bytes begin, after white space, as a JSON object does (no ONNX file does: its first byte is a
     * field's tag).
     */
    private static boolean json(byte[] bytes) {
        for (byte b : bytes) {
            if (b == '{') {
                return true;
            }
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r' && b != (byte) 0xEF && b != (byte) 0xBB
                    && b != (byte) 0xBF) {
                return false;
            }
        }
        return false;
    }

    private static <T> T throwAt(InvalidInputException e) {
        throw e;
    }

    /** What to do with an export whose data input has a fixed first dimension (no {@code dynamic_axes}). */
    public enum FixedBatch {
        /**
         * Treat the fixed first dimension as the batch (logged once, and recorded in {@link Coverage#exportedBatch});
         * refuse, saying how to re-export, when the graph does not work at other batch sizes (a batch baked into a
         * reshape, say).
         */
        AS_BATCH,
        /** Refuse the file, saying how to re-export it with a symbolic batch. */
        REFUSE
    }

    /**
     * Import options: values for named symbolic dimensions other than the batch, the fixed-batch policy, and the
     * most bytes read from a file.
     *
     * <pre>{@code
     * ModelGraph g = OnnxImporter.read(path, OnnxImporter.Options.builder().dim("seq", 128).build());
     * }</pre>
     *
     * @param dimensions   values of named dimensions ({@code seq=128}, {@code H=224}); the batch symbol cannot be
     *                     bound
     * @param fixedBatch   what to do with a fixed batch dimension
     * @param maxFileBytes the most bytes {@link #read(Path, Options)} reads from a file, a device or a pipe
     *                     (default {@link #DEFAULT_MAX_FILE_BYTES}, at most that)
     */
    public record Options(Map<String, Long> dimensions, FixedBatch fixedBatch, long maxFileBytes) {
        private static final Options DEFAULTS = new Options(Map.of(), FixedBatch.AS_BATCH);

        /** Validates and copies. */
        public Options {
            dimensions = Map.copyOf(dimensions);
            dimensions.forEach((k, v) -> Checks.argument(!k.isEmpty() && v != null && v > 0,
                    "dimension '%s' must be bound to a positive size, got %s", k, v));
            Objects.requireNonNull(fixedBatch, "fixedBatch");
            Checks.argument(maxFileBytes > 0 && maxFileBytes <= DEFAULT_MAX_FILE_BYTES,
                    "maxFileBytes must be in [1, %s]: %s", DEFAULT_MAX_FILE_BYTES, maxFileBytes);
        }

        /** Options with the default size cap. */
        public Options(Map<String, Long> dimensions, FixedBatch fixedBatch) {
            this(dimensions, fixedBatch, DEFAULT_MAX_FILE_BYTES);
        }

        /** No bound dimensions; a fixed batch dimension is treated as the batch. */
        public static Options defaults() {
            return DEFAULTS;
        }

        /** Starts options. */
        public static Builder builder() {
            return new Builder();
        }

        /** Builds {@link Options}. */
        public static final class Builder {
            private final Map<String, Long> dims = new LinkedHashMap<>();
            private FixedBatch fixed = FixedBatch.AS_BATCH;
            private long maxFileBytes = DEFAULT_MAX_FILE_BYTES;

            private Builder() {
            }

            /** Binds a named dimension ({@code dim("seq", 128)}). */
            public Builder dim(String name, long size) {
                Checks.argument(size > 0, "dimension '%s' must be positive: %s", name, size);
                dims.put(Objects.requireNonNull(name, "name"), size);
                return this;
            }

            /** Binds several named dimensions. */
            public Builder dims(Map<String, Long> values) {
                values.forEach(this::dim);
                return this;
            }

            /** The fixed-batch policy (default {@link FixedBatch#AS_BATCH}). */
            public Builder fixedBatch(FixedBatch value) {
                this.fixed = Objects.requireNonNull(value, "fixed");
                return this;
            }

            /** The most bytes read from a file (default {@link #DEFAULT_MAX_FILE_BYTES}). */
            public Builder maxFileBytes(long value) {
                this.maxFileBytes = value;
                return this;
            }

            /** The options. @throws IllegalArgumentException for a cap outside [1, 2 GiB] */
            public Options build() {
                return new Options(dims, fixed, maxFileBytes);
            }
        }
    }
}
