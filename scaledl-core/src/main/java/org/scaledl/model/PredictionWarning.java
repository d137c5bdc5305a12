package org.scaledl.model;

import java.util.Objects;
import java.util.Optional;
import org.scaledl.Checks;

/**
 * Why a prediction should be trusted less (the workload leaves the model's training {@link Domain}, the graph was
 * imported partly, the model could not measure its own error), or what the predictor took the workload to be (what it
 * assumed or chose for it, what may not be what was meant, how it read it: {@link Kind#ASSUMED},
 * {@link Kind#CHOSEN}, {@link Kind#UNUSUAL_JOB}, {@link Kind#NOTE}), or what the model's own history did to it (a
 * calibration on other GPUs: {@link Kind#CALIBRATED_ELSEWHERE}).
 *
 * <pre>{@code
 * for (PredictionWarning w : predictor.predict(workload).warnings()) {
 *     if (w.kind() == PredictionWarning.Kind.OUTSIDE_BATCH_RANGE && w.share() > 0.5) { ... }
 * }
 * }</pre>
 *
 * @param kind    what was found
 * @param message one sentence naming the offending value and the range
 * @param value   the offending value, when it is a number
 * @param range   the range the model saw, as text ({@code "2..32"}), empty when there is none
 * @param share   the share of the predicted time the warning concerns, 0 to 1
 */
public record PredictionWarning(Kind kind, String message, Optional<Double> value, String range, double share) {

    /** What a warning is about. */
    public enum Kind {
        /** The batch is outside the training range. */
        OUTSIDE_BATCH_RANGE,
        /**
         * The world size (devices of the job) is outside the training range: the device's own, or for a GPU without
         * runs of its own, the GPU counts any GPU of the training data ran.
         */
        OUTSIDE_WORLD_SIZE_RANGE,
        /** The thread count is outside the training range. */
        OUTSIDE_THREADS_RANGE,
        /** The phase was never measured (on this device). */
        UNSEEN_PHASE,
        /**
         * The GPU has no kernels or runs in the training data: it is predicted from its description alone (a few of
         * its kernels or runs measured correct that: {@code adapt}, {@code calibrate}).
         */
        UNSEEN_DEVICE,
        /** Tensor or pipeline parallelism of a degree the model never saw. */
        UNSEEN_PARALLELISM,
        /** Operator types that no training graph had. */
        UNSEEN_OPERATOR,
        /** Operator families that no training graph had (predicted with the shared centre). */
        UNSEEN_FAMILY,
        /** Layers whose FLOPs, bytes or intensity lie outside what their family saw in training. */
        LAYER_FEATURES_OUTSIDE_RANGE,
        /**
         * The graph has more or fewer layers than any training graph (of a configuration's compact graph, one block
         * of each kind, said only by a predictor with an interaction model, which reads the graph whole).
         */
        GRAPH_SIZE_OUTSIDE_RANGE,
        /** Some layers' shapes or operators are unknown (see {@link org.scaledl.graph.Coverage}). */
        PARTIAL_GRAPH,
        /** The graph was exported with a fixed batch that the importer treated as the batch. */
        FIXED_BATCH_EXPORT,
        /** The model could not cross-validate (too few families), so its interval is a guess. */
        NO_CROSS_VALIDATION,
        /**
         * Something the workload did not say was assumed (a topology derived from the device's form factor, the
         * gradients' reduction overlapped with the backward pass): giving it would settle it.
         */
        ASSUMED,
        /**
         * What the predictor chose where the workload left the choice to it: the recomputation (or offloading) of a
         * training job of {@code recompute auto}, to fit the GPU's memory.
         */
        CHOSEN,
        /**
         * What the workload says may not be what was meant: a context longer than the configuration's positions, ZeRO
         * over one data-parallel replica, fewer micro-batches than pipeline stages, a layer count beyond any model
         * chunk's layers, tensor parallelism across nodes, an NVLink domain beyond the device's standard system.
         * Predicted as said.
         */
        UNUSUAL_JOB,
        /**
         * How the predictor read what the workload said, or where the job's time goes that its user may not expect
         * (a host that sets the pace, an uneven pipeline, a precision the GPU runs in another, the last node partly
         * filled): said, not assumed, and the prediction is not less trusted for it.
         */
        NOTE,
        /** The job needs more memory per device than the device has. */
        OUT_OF_MEMORY,
        /** The precision was never measured in training: its matrix work rests on the data sheet's peak. */
        UNSEEN_PRECISION,
        /**
         * LoRA fine-tuning was never measured in training (every run trained every weight): the adapters' work rests
         * on the physics of full training's runs.
         */
        UNSEEN_LORA,
        /**
         * The recomputation the predictor chose for a training job that left it open ({@code recompute auto}) fills
         * the GPU's memory to within {@link RuntimePredictor#MEMORY_EDGE} of its capacity: a tuned recipe that close to
         * the limit may recompute more or less (or offload), so the interval is widened.
         */
        NEAR_MEMORY_LIMIT,
        /**
         * The model was calibrated on transformers' runs of other GPUs only (the runs that refit the execution model;
         * an imported graph's runs move their own factors; {@link Provenance#calibrationDevices()} names every
         * run's): the execution model's coefficients are one set for every GPU, so the calibration moved this job's
         * prediction too, from what that cluster's runs say of their own GPUs (the model it was calibrated from may
         * suit this GPU better).
         * Said, not less trusted: the interval is not widened.
         */
        CALIBRATED_ELSEWHERE
    }

    /** Validates. */
    public PredictionWarning {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(value, "value");
        Checks.argument(value.filter(v -> v.isNaN()).isEmpty(), "a warning's value must be a number: %s", value);
        Objects.requireNonNull(range, "range");
        Checks.argument(share >= 0 && share <= 1, "share must be in [0, 1]: %s", share);
    }
}
