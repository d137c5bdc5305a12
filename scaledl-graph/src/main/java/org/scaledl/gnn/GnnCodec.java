package org.scaledl.gnn;

import com.fasterxml.jackson.databind.JsonNode;
import org.scaledl.InvalidInputException;
import org.scaledl.model.InteractionCodec;
import org.scaledl.model.InteractionModel;
import org.scaledl.model.ModelFile;
import org.scaledl.model.RuntimePredictor;

/**
 * Reads the GNN interaction stage of saved predictors (format {@code gnn}), and version-1 files of format
 * {@code scaledl-gnn-model} (a layer-wise predictor with the network, saved before the stage joined the
 * predictor's own format). Registered in {@code META-INF/services/org.scaledl.model.InteractionCodec}.
 */
public final class GnnCodec implements InteractionCodec {
    /** The envelope format of version-1 GNN files. */
    static final String V1_FORMAT = "scaledl-gnn-model";

    /** For {@link java.util.ServiceLoader}. */
    public GnnCodec() {
    }

    @Override
    public String format() {
        return GnnCorrection.FORMAT;
    }

    @Override
    public InteractionModel read(JsonNode body) {
        return GnnCorrection.read(body);
    }

    @Override
    public V1 readV1(String format, JsonNode body) {
        if (!format.equals(V1_FORMAT)) {
            return null;
        }
        JsonNode lw = body.path("layerwise");
        if (!lw.isObject()) {
            throw InvalidInputException.of("a version-1 gnn-only file (no layer-wise model) is a baseline, not a "
                    + "predictor");
        }
        RuntimePredictor layerwise = ModelFile.predictor(lw);
        return new V1(layerwise, read(body), body.path("name").asText("scaledl"));
    }
}
