package org.scaledl.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.models.BundledModels;

/**
 * What {@code --model} names: a bundled predictor ({@code gpu}, {@code cpu-zoo}, {@code cpu-ddp},
 * {@code cpu-machines}) or the path of a saved one. A file of that name in the working directory wins over the
 * bundled one (say {@code ./gpu} to be explicit either way).
 */
final class ModelArgument {
    /** Bundled models being loaded ahead of their command ({@link #prefetch}), taken once by {@link #load}. */
    private static final Map<String, CompletableFuture<RuntimePredictor>> PREFETCHED = new ConcurrentHashMap<>();

    private ModelArgument() {
    }

    /**
     * Starts loading the bundled model a command line names ({@code --model NAME}, or {@code layouts}' default
     * {@code gpu}) on a daemon thread, so that reading the 5 MB model overlaps the JVM's and the option parser's own
     * start-up; {@link #load} then takes it (with the same result or error as loading it then). Nothing starts for a
     * file, or a name a file in the working directory shadows.
     */
    static void prefetch(String... args) {
        String value = args.length > 0 && args[0].equals("layouts") ? "gpu" : null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--model") && i + 1 < args.length) {
                value = args[i + 1];
            } else if (args[i].startsWith("--model=")) {
                value = args[i].substring("--model=".length());
            }
        }
        if (value == null || !BundledModels.names().contains(value) || namesFile(value)) {
            return;
        }
        String name = value;
        if (PREFETCHED.containsKey(name)) {
            // already started (main, then the command line it runs)
            return;
        }
        PREFETCHED.computeIfAbsent(name, k -> CompletableFuture.supplyAsync(() -> BundledModels.load(k),
                ModelArgument::daemon));
        boolean gpu = name.equals("gpu");
        daemon(() -> {
            if (gpu) {
                // the GPU catalog a device model's command reads next (its class initialiser runs once, here)
                org.scaledl.io.DeviceCatalog.bundled();
            }
            // the formatter every prediction's text and warnings use: its first use loads the locale data (about
            // 30 ms of a cold JVM), here rather than on the command's thread
            String.format(java.util.Locale.ROOT, "%.1f", 0.0);
        });
    }

    /** The longest file name (one path component) Linux, macOS and Windows file systems take, bytes. */
    private static final int MAX_NAME_BYTES = 255;

    /**
     * Whether a model value names a file of the working directory rather than a bundled model: it exists, and is no
     * folder of a bundled model's name (a data folder called {@code gpu} does not hide the bundled model).
     */
    private static boolean namesFile(String value) {
        Path p = Path.of(value);
        return Files.exists(p) && !(Files.isDirectory(p) && BundledModels.names().contains(value));
    }

    private static void daemon(Runnable r) {
        Thread t = new Thread(r, "scaledl-prefetch");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Loads the predictor a {@code --model} value names.
     *
     * @throws org.scaledl.InvalidInputException for a file that is not a model
     * @throws IllegalArgumentException for a name that is neither a file nor a bundled model, listing the bundled ones
     */
    static RuntimePredictor load(String value) {
        return load("--model", value);
    }

    /**
     * Loads the predictor an option other than {@code --model} names ({@code --calibrate}, {@code --prior},
     * {@code --gpu-model}), its refusals naming that option.
     */
    static RuntimePredictor load(String option, String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException(option + ": an empty value names no file and no bundled model (bundled "
                    + "models: " + String.join(", ", BundledModels.names()) + ")");
        }
        CompletableFuture<RuntimePredictor> early = PREFETCHED.remove(value);
        if (early != null) {
            try {
                return early.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                if (e.getCause() instanceof Error err) {
                    throw err;
                }
                throw e;
            }
        }
        Path p = Path.of(value);
        if (namesFile(value) || value.contains("/") || value.contains("\\") || value.endsWith(".sdl")) {
            Path name = p.getFileName();
            int nameBytes = name == null ? 0 : name.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (!Files.exists(p) && nameBytes > MAX_NAME_BYTES) {
                throw new IllegalArgumentException(option + " " + org.scaledl.InvalidInputException.escaped(value)
                        + ": its file name is " + nameBytes + " bytes, longer than a file system's " + MAX_NAME_BYTES
                        + " (no file can have it)");
            }
            if (!Files.exists(p)) {
                throw new IllegalArgumentException(option + " " + org.scaledl.InvalidInputException.escaped(value)
                        + ": no such file (bundled models: "
                        + String.join(", ", BundledModels.names()) + ")");
            }
            if (BundledModels.names().contains(value)) {
                // (said, not refused: a saved model named like a bundled one is the documented way to shadow it)
                Main.sayOnSuccess("scaledl: note: " + option + " " + value + " reads the file " + value + " of the "
                        + "working directory, not the bundled model " + value + " (a file of that name there takes "
                        + "its place; give ./" + value + " to say so)");
            }
            try {
                return RuntimePredictor.load(p);
            } catch (org.scaledl.InvalidInputException e) {
                throw otherInput(p).map(hint -> org.scaledl.InvalidInputException.inSource(value, e.detail() + hint))
                        .orElse(e);
            }
        }
        if (BundledModels.names().contains(value)) {
            return BundledModels.load(value);
        }
        throw new IllegalArgumentException(option + " " + org.scaledl.InvalidInputException.escaped(value)
                + ": neither a file nor a bundled model"
                + org.scaledl.Suggestions.closest(value, BundledModels.names()).map(s -> "; did you mean '" + s + "'?")
                        .orElse("") + " (bundled: " + String.join(", ", BundledModels.names()) + ")");
    }

    /**
     * What a file given as a model that is none may be meant for: a Hugging Face configuration ({@code --transformer})
     * or an ONNX graph ({@code --graph}), said after the refusal.
     */
    private static java.util.Optional<String> otherInput(Path p) {
        String name = p.getFileName() == null ? "" : p.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        if (name.endsWith(".onnx")) {
            return java.util.Optional.of(" (an ONNX graph: give it with --graph, and a model with --model)");
        }
        if (name.endsWith(".json")) {
            try {
                String head = new String(org.scaledl.model.file.SafeFiles.readBounded(p, 1 << 16, "a model file"),
                        java.nio.charset.StandardCharsets.UTF_8);
                if (head.contains("\"model_type\"") || head.contains("\"architectures\"")) {
                    return java.util.Optional.of(" (a Hugging Face configuration: give it with --transformer, and a "
                            + "model with --model, e.g. gpu)");
                }
            } catch (RuntimeException e) {
                // unreadable: the refusal says what it is
            }
        }
        return java.util.Optional.empty();
    }
}
