package org.scaledl.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.scaledl.Checks;

/**
 * Leave-one-group-out folds over samples: the one loop that held-out evaluation, the predictor's inner
 * cross-validation and the interaction stage's out-of-group targets all use, so that "held out" means the same
 * thing everywhere. Groups are the values of a tag (usually {@code family}), in first-seen order.
 *
 * <pre>{@code
 * for (Folds.Fold f : Folds.leaveOneGroupOut(samples, Folds.byTag("family"))) {
 *     Model m = trainer.fit(f.train(samples));
 *     f.test(samples).forEach(s -> score(m, s));
 * }
 * }</pre>
 */
public final class Folds {
    private Folds() {
    }

    /**
     * One fold.
     *
     * @param group the held-out group
     * @param train indices of the training samples, ascending
     * @param test  indices of the held-out samples, ascending
     */
    public record Fold(String group, List<Integer> train, List<Integer> test) {
        /** Copies. */
        public Fold {
            train = List.copyOf(train);
            test = List.copyOf(test);
        }

        /** The training samples of a list (the one the fold was made from). */
        public <T> List<T> train(List<T> all) {
            return train.stream().map(all::get).toList();
        }

        /** The held-out samples of a list. */
        public <T> List<T> test(List<T> all) {
            return test.stream().map(all::get).toList();
        }
    }

    /** Groups by a tag's value; a sample without the tag is in the group {@code ""}. */
    public static Function<Sample, String> byTag(String tag) {
        return s -> s.workload().tag(tag).orElse("");
    }

    /**
     * Groups by a tag's value, refusing samples without it.
     *
     * @throws IllegalArgumentException (when the folds are made) for a sample without the tag
     */
    public static Function<Sample, String> byTagStrict(String tag) {
        return s -> s.workload().tag(tag).orElseThrow(() -> new IllegalArgumentException(
                "sample " + s.workload() + " has no tag '" + tag + "'"));
    }

    /** The group of every sample, in order. */
    public static List<String> groups(List<Sample> samples, Function<Sample, String> groupOf) {
        return samples.stream().map(groupOf).toList();
    }

    /** One fold per distinct group, in first-seen order. */
    public static List<Fold> leaveOneGroupOut(List<Sample> samples, Function<Sample, String> groupOf) {
        return leaveOneGroupOut(groups(samples, groupOf));
    }

    /** One fold per distinct value of {@code groups} (one entry per sample), in first-seen order. */
    public static List<Fold> leaveOneGroupOut(List<String> groups) {
        Map<String, List<Integer>> members = new LinkedHashMap<>();
        for (int i = 0; i < groups.size(); i++) {
            members.computeIfAbsent(groups.get(i), k -> new ArrayList<>()).add(i);
        }
        List<Fold> out = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> e : members.entrySet()) {
            List<Integer> train = new ArrayList<>();
            for (int i = 0; i < groups.size(); i++) {
                if (!groups.get(i).equals(e.getKey())) {
                    train.add(i);
                }
            }
            out.add(new Fold(e.getKey(), train, e.getValue()));
        }
        return out;
    }

    /**
     * At most {@code k} folds over groups: with more than {@code k} distinct groups, group {@code j} (in first-seen
     * order) is held out in fold {@code j mod k}, so every fold still holds whole groups out; with {@code k} or
     * fewer groups, one fold per group ({@link #leaveOneGroupOut(List)}).
     */
    public static List<Fold> groupFolds(List<String> groups, int k) {
        Checks.argument(k >= 2, "need at least 2 folds: %s", k);
        Map<String, Integer> index = new LinkedHashMap<>();
        for (String g : groups) {
            index.putIfAbsent(g, index.size());
        }
        if (index.size() <= k) {
            return leaveOneGroupOut(groups);
        }
        List<Fold> out = new ArrayList<>();
        for (int f = 0; f < k; f++) {
            List<Integer> train = new ArrayList<>();
            List<Integer> test = new ArrayList<>();
            List<String> held = new ArrayList<>();
            for (int i = 0; i < groups.size(); i++) {
                (index.get(groups.get(i)) % k == f ? test : train).add(i);
            }
            for (Map.Entry<String, Integer> e : index.entrySet()) {
                if (e.getValue() % k == f) {
                    held.add(e.getKey());
                }
            }
            out.add(new Fold(String.join("+", held), train, test));
        }
        return out;
    }

    /** The number of distinct groups. */
    public static int count(List<String> groups) {
        Objects.requireNonNull(groups, "groups");
        return (int) groups.stream().distinct().count();
    }
}
