package org.scaledl.workload;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An immutable list of measured {@link Sample}s with a name, as read by {@link org.scaledl.io.DatasetReader}. Each sample's workload
 * carries the tags {@code model}, {@code family} (see {@link #familyOf}), {@code row} (0-based data row of
 * {@code runs.csv}) and, when present, {@code resolution}.
 *
 * @param name    a label (the folder name)
 * @param samples the measured samples, in file order
 */
public record Dataset(String name, List<Sample> samples) {
    private static final Pattern FAMILY = Pattern.compile("^([a-z]+)");

    /** Validates and copies. */
    public Dataset {
        Objects.requireNonNull(name, "name");
        samples = List.copyOf(samples);
    }

    /**
     * The architecture family of a model name: its leading letters, so {@code resnet18}, {@code resnet50} give
     * {@code resnet} and {@code mobilenet_v2}, {@code mobilenet_v3_large} give {@code mobilenet}. Held-out evaluation
     * leaves whole families out, so no sibling of a test model is ever fitted on.
     */
    public static String familyOf(String model) {
        Matcher m = FAMILY.matcher(model.toLowerCase(Locale.ROOT));
        return m.find() ? m.group(1) : model;
    }

    /** Number of samples. */
    public int size() {
        return samples.size();
    }

    /** The samples that satisfy a predicate. */
    public Dataset filter(Predicate<Sample> keep) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (keep.test(s)) {
                out.add(s);
            }
        }
        return new Dataset(name, out);
    }

    /** The distinct values of a tag, in first-seen order. */
    public List<String> distinct(String tag) {
        Set<String> out = new LinkedHashSet<>();
        for (Sample s : samples) {
            s.workload().tag(tag).ifPresent(out::add);
        }
        return List.copyOf(out);
    }

    /** Concatenation with another dataset. */
    public Dataset plus(Dataset other) {
        Objects.requireNonNull(other, "other");
        List<Sample> all = new ArrayList<>(samples);
        all.addAll(other.samples);
        return new Dataset(name + "+" + other.name, all);
    }
}
