package org.scaledl.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import picocli.CommandLine.Option;

/** The import options every command that reads an ONNX graph shares: named dimensions, partial graphs. */
final class GraphOptions {
    @Option(names = "--dim", paramLabel = "NAME=SIZE", description = "Bind a named symbolic dimension other than "
            + "the batch, e.g. --dim seq=128 (repeatable, each name once)")
    List<String> dimArgs = new ArrayList<>();

    @Option(names = "--allow-partial", description = "Predict a graph even when some layers' shapes or operators "
            + "are unknown (the prediction then carries a warning with their share)")
    boolean allowPartial;

    /**
     * Reads a transformer's configuration as its compact graph at a sequence length; {@code --dim}, which binds an
     * ONNX graph's named dimensions and would be ignored here, is refused (a configuration's sequence is
     * {@code --seq}).
     */
    ModelGraph readTransformer(Path config, long seq) {
        if (!dimArgs.isEmpty()) {
            throw new IllegalArgumentException("--dim binds an ONNX graph's named dimensions; a configuration's "
                    + "sequence length is --seq");
        }
        return org.scaledl.transformer.HuggingFaceConfig.read(config).graph(seq);
    }

    /**
     * Reads a graph with the bound dimensions.
     *
     * @throws IllegalArgumentException (a usage error) for a {@code --dim} that binds the file's batch dimension
     */
    ModelGraph read(Path file) {
        Map<String, Long> dims = dims();
        if (!dims.isEmpty() && java.nio.file.Files.isRegularFile(file)) {
            OnnxImporter.batchSymbol(file).filter(dims::containsKey).ifPresent(b -> {
                throw new IllegalArgumentException("--dim " + org.scaledl.InvalidInputException.printable(b, 40) + "="
                        + dims.get(b) + ": '" + org.scaledl.InvalidInputException.printable(b, 40) + "' is " + file
                        + "'s batch dimension, a setting of each job: give --batch " + dims.get(b));
            });
        }
        return OnnxImporter.read(file, OnnxImporter.Options.builder().dims(dims).build());
    }

    /**
     * The bound dimensions by name.
     *
     * @throws IllegalArgumentException (a usage error) for a binding that is not NAME=SIZE with a positive integer
     *         size, or a name bound twice
     */
    Map<String, Long> dims() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String arg : dimArgs) {
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg.strip() : arg.substring(0, eq).strip();
            String size = eq < 0 ? "" : arg.substring(eq + 1).strip();
            if (eq < 0 || name.isEmpty() || size.isEmpty()) {
                throw new IllegalArgumentException("--dim " + org.scaledl.InvalidInputException.printable(arg, 40)
                        + ": expected NAME=SIZE, such as --dim seq=128");
            }
            long value;
            try {
                value = Long.parseLong(size);
            } catch (NumberFormatException e) {
                value = -1;
            }
            if (value < 1) {
                throw new IllegalArgumentException("--dim " + org.scaledl.InvalidInputException.printable(arg, 40)
                        + ": the size must be a positive integer");
            }
            Long before = out.put(name, value);
            if (before != null) {
                throw new IllegalArgumentException("--dim " + org.scaledl.InvalidInputException.printable(name, 40)
                        + " is bound twice (" + before + " and " + value + "); bind each name once");
            }
        }
        return out;
    }
}
