package org.scaledl.model;

import java.util.List;
import org.scaledl.workload.Sample;

/**
 * Fits a {@link RuntimeModel} from measured samples (learner and learned are separate types). Implementations are
 * immutable configurations; {@link #fit} is deterministic for a fixed configuration and sample order.
 *
 * <pre>{@code
 * RuntimeTrainer t = RuntimePredictor.builder().seed(7).build();
 * RuntimeModel m = t.fit(dataset.samples());
 * }</pre>
 */
public interface RuntimeTrainer {
    /** The method's name, also the fitted model's. */
    String name();

    /**
     * Fits a model.
     *
     * @throws IllegalArgumentException if there are too few samples to fit
     */
    RuntimeModel fit(List<Sample> samples);
}
