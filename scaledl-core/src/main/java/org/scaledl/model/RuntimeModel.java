package org.scaledl.model;

import org.scaledl.workload.Workload;

/**
 * A fitted runtime model: immutable and safe to call from many threads.
 *
 * <pre>{@code
 * RuntimeModel m = trainer.fit(samples);
 * double ms = m.predict(workload).millis();
 * }</pre>
 */
public interface RuntimeModel {
    /** The method's name as used in evaluation tables (e.g. {@code scaledl}, {@code roofline}). */
    String name();

    /** Predicts one iteration of a workload. */
    Prediction predict(Workload workload);
}
