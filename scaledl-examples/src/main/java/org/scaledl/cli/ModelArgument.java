package org.scaledl.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.models.BundledModels;

/**
 * What {@code --model} names: a bundled predictor ({@code gpu}, {@code cpu-zoo}, {@code cpu-ddp},
 * {@code cpu-machines}) or the path of a saved one. A file of that name in the working directory wins over the
 * bundled one (say {@code ./gpu} to be explicit either way).
 */
final class ModelArgument {
    private ModelArgument() {
    }

    /**
     * Loads the predictor a {@code --model} value names.
     *
     * @throws org.scaledl.InvalidInputException for a file that is not a model
     * @throws IllegalArgumentException for a name that is neither a file nor a bundled model, listing the bundled ones
     */
    static RuntimePredictor load(String value) {
        Path p = Path.of(value);
        if (Files.exists(p) || value.contains("/") || value.contains("\\") || value.endsWith(".sdl")) {
            if (!Files.exists(p)) {
                throw new IllegalArgumentException("--model " + value + ": no such file (bundled models: "
                        + String.join(", ", BundledModels.names()) + ")");
            }
            return RuntimePredictor.load(p);
        }
        if (BundledModels.names().contains(value)) {
            return BundledModels.load(value);
        }
        throw new IllegalArgumentException("--model " + value + ": neither a file nor a bundled model"
                + org.scaledl.Suggestions.closest(value, BundledModels.names()).map(s -> "; did you mean '" + s + "'?")
                        .orElse("") + " (bundled: " + String.join(", ", BundledModels.names()) + ")");
    }
}
