package org.scaledl.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.scaledl.graph.ModelGraph;
import org.scaledl.onnx.OnnxImporter;
import picocli.CommandLine.Option;

/** The import options every command that reads an ONNX graph shares: named dimensions, partial graphs. */
final class GraphOptions {
    @Option(names = "--dim", paramLabel = "NAME=SIZE", description = "Bind a named symbolic dimension other than "
            + "the batch, e.g. --dim seq=128 (repeatable)")
    Map<String, Long> dims = new LinkedHashMap<>();

    @Option(names = "--allow-partial", description = "Predict a graph even when some layers' shapes or operators "
            + "are unknown (the prediction then carries a warning with their share)")
    boolean allowPartial;

    /** Reads a graph with the bound dimensions. */
    ModelGraph read(Path file) {
        return OnnxImporter.read(file, OnnxImporter.Options.builder().dims(dims).build());
    }
}
