package org.scaledl.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads a saved {@link InteractionModel} of one format. Implementations are found with
 * {@link java.util.ServiceLoader} ({@code META-INF/services/org.scaledl.model.InteractionCodec}), so the core reads
 * predictor files whose interaction stage lives in another module.
 */
public interface InteractionCodec {
    /** The format this codec reads (the model's {@link InteractionModel#format()}). */
    String format();

    /**
     * Reads a body written by {@link InteractionModel#body()}.
     *
     * @throws org.scaledl.InvalidInputException for a malformed body
     */
    InteractionModel read(JsonNode body);

    /**
     * Reads a version-1 file of its own (a predictor with the interaction stage saved before the interaction stage
     * was part of the predictor's format), when it has such a format.
     *
     * @param format the envelope's format
     * @param body   the verified body
     * @return the layer-wise predictor and the stage, or {@code null} when the format is not this codec's
     */
    default V1 readV1(String format, JsonNode body) {
        return null;
    }

    /**
     * What a version-1 file held.
     *
     * @param layerwise the embedded layer-wise predictor
     * @param model     the interaction stage
     * @param name      the method name saved with it
     */
    record V1(RuntimePredictor layerwise, InteractionModel model, String name) {
    }
}
