package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages read like the data flow, and no code imports upwards (which also rules out cycles): a plain scan of
 * every module's main sources, comments removed. Lowest first:
 *
 * <pre>
 *   doe (pure math)   org.scaledl (InvalidInputException)
 *   graph ─► onnx ─► workload (vocabulary) ─► features ─► io (readers) ─► model ─► eval ─► gnn ─► cli
 * </pre>
 */
class LayeringTest {
    /**
     * Each package's layer: a package uses only packages of lower layers (packages of one layer are independent of
     * each other). Inside {@code model}, lowest first: the shared cost vocabulary and the file envelope;
     * communication; the parallel execution over devices; the two layer cost stages (host, device); planning; then
     * the front door.
     */
    private static final Map<String, Integer> LEVEL = Map.ofEntries(Map.entry("org.scaledl.doe", 0),
            Map.entry("org.scaledl", 0), Map.entry("org.scaledl.graph", 1), Map.entry("org.scaledl.onnx", 2),
            Map.entry("org.scaledl.transformer", 2), Map.entry("org.scaledl.workload", 3),
            Map.entry("org.scaledl.features", 4), Map.entry("org.scaledl.io", 5),
            Map.entry("org.scaledl.model.cost", 6), Map.entry("org.scaledl.model.file", 6),
            Map.entry("org.scaledl.model.comm", 7), Map.entry("org.scaledl.model.exec", 8),
            Map.entry("org.scaledl.model.host", 9), Map.entry("org.scaledl.model.device", 9),
            Map.entry("org.scaledl.model.plan", 10), Map.entry("org.scaledl.model", 11),
            Map.entry("org.scaledl.eval", 12), Map.entry("org.scaledl.gnn", 13), Map.entry("org.scaledl.models", 13),
            Map.entry("org.scaledl.cli", 14));
    private static final Pattern IMPORT = Pattern.compile(
            "^import (?:static )?(org\\.scaledl(?:\\.[a-z]+)*)\\.[A-Z]", Pattern.MULTILINE);
    private static final Pattern QUALIFIED = Pattern.compile("\\b(org\\.scaledl(?:\\.[a-z]+)*)\\.[A-Z]\\w*");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\n]*", Pattern.DOTALL);
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);

    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(dir.resolve("scaledl-core/pom.xml"))) {
            dir = dir.getParent();
        }
        return dir;
    }

    /**
     * The libraries need no Guava at run time (argument checks are {@link Checks}, immutable collections the JDK's):
     * an application pinned to an old Guava (Hadoop 2 and Spark 2 carry Guava 11 to 16) cannot break them with a
     * {@code NoSuchMethodError}.
     */
    @Test
    void noLibraryModuleUsesGuava() throws IOException {
        List<String> users = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root())) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                    .toList()) {
                if (Files.readString(f).contains("com.google.common")) {
                    users.add(root().relativize(f).toString());
                }
            }
        }
        assertTrue(users.isEmpty(), users.toString());
    }

    @Test
    void noPackageImportsFromAHigherLayer() throws IOException {
        List<String> violations = new ArrayList<>();
        int files = 0;
        try (Stream<Path> s = Files.walk(root())) {
            for (Path f : s.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/")
                    && !p.getFileName().toString().equals("module-info.java")).toList()) {
                // Code only: Javadoc may point anywhere (a lower layer's docs can name the class that uses it).
                String text = COMMENT.matcher(Files.readString(f)).replaceAll(" ");
                Matcher pm = PACKAGE.matcher(text);
                assertTrue(pm.find(), f.toString());
                String pkg = pm.group(1);
                Integer own = LEVEL.get(pkg);
                assertTrue(own != null, "package " + pkg + " (" + f + ") has no layer: add it to LayeringTest");
                files++;
                for (Pattern p : List.of(IMPORT, QUALIFIED)) {
                    Matcher m = p.matcher(text);
                    while (m.find()) {
                        String used = m.group(1);
                        Integer level = LEVEL.get(used);
                        if (level == null) {
                            violations.add(f.getFileName() + ": unknown package " + used);
                        } else if (level > own || level.equals(own) && !used.equals(pkg) && own > 0) {
                            violations.add(f.getFileName() + " (" + pkg + ") uses " + used);
                        }
                    }
                }
            }
        }
        assertTrue(files > 50, "scanned " + files + " files");
        assertTrue(violations.isEmpty(), String.join("\n", violations.stream().distinct().toList()));
    }

    /**
     * The core module exports its API, with the packages of the types its public methods return (the operator cost
     * of {@code RuntimePredictor.operators()}, the execution model and named terms of {@code executionModel()}: a
     * module-path user could not call them otherwise, javac's {@code -Xlint:exports} warning), and keeps the host
     * basis unexported; the model-file helpers are exported only to the module with files of its own.
     */
    @Test
    void theCoreModuleKeepsItsInternalsUnexported() throws IOException {
        String descriptor = Files.readString(root().resolve("scaledl-core/src/main/java/module-info.java"));
        assertTrue(!Pattern.compile("exports " + Pattern.quote("org.scaledl.model.host") + "\\s*;").matcher(
                descriptor).find(), "org.scaledl.model.host is exported");
        for (String returned : List.of("org.scaledl.model.cost", "org.scaledl.model.exec")) {
            assertTrue(descriptor.contains("exports " + returned + ";"), returned + " is not exported");
        }
        assertTrue(descriptor.contains("exports org.scaledl.model.file to org.scaledl.gnn;"), descriptor);
        assertTrue(descriptor.contains("exports org.scaledl.model;"), descriptor);
    }
}
