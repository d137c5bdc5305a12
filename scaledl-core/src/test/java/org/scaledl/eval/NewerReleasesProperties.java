package org.scaledl.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.scaledl.graph.ModelGraph;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * {@link ClusterEvaluation#newerReleases} against a slow reference of its rule, over random tables of release tags
 * (NGC dates with and without a month's leading zero or a patch, and undated tags): what it holds out is dated, whole
 * dates only, newer than every dated release it fits, within a quarter of the runs, as many as the rule allows, at
 * least one dated release left, and in date order.
 */
class NewerReleasesProperties {
    private static final ModelGraph GRAPH = TransformerSpec.decoder("tiny", 64, 2, 1, 100).build().graph(16);

    @Provide
    Arbitrary<List<String>> tags() {
        Arbitrary<String> dated = Arbitraries.integers().between(24, 27).flatMap(y -> Arbitraries.integers()
                .between(1, 12).flatMap(m -> Arbitraries.integers().between(-1, 2).flatMap(p -> Arbitraries.of(true,
                        false).map(pad -> y + "." + (pad && m < 10 ? "0" + m : Integer.toString(m))
                                + (p < 0 ? "" : "." + (pad ? "0" + p : Integer.toString(p)))))));
        Arbitrary<String> undated = Arbitraries.of("automodel main", "BigScience tr11 prequel (2022-02)", "", "main");
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(4, dated), net.jqwik.api.Tuple.of(1, undated)).list()
                .ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void holdsOutTheNewestWholeDatesWithinAQuarter(@ForAll("tags") List<String> tags) {
        List<Sample> runs = new ArrayList<>();
        for (String t : tags) {
            Workload.Builder b = Workload.builder(GRAPH);
            if (!t.isEmpty()) {
                b.tag("release", t);
            }
            runs.add(Sample.of(b.build(), 1));
        }
        List<String> held = ClusterEvaluation.newerReleases(runs);
        // the reference: dates as (year, month, patch or -1), the runs of each
        TreeMap<Long, List<String>> dates = new TreeMap<>();
        Map<Long, Integer> count = new HashMap<>();
        for (String t : tags) {
            Long d = date(t);
            if (d != null) {
                List<String> names = dates.computeIfAbsent(d, k -> new ArrayList<>());
                if (!names.contains(t)) {
                    names.add(t);
                }
                count.merge(d, 1, Integer::sum);
            }
        }
        int heldRuns = 0;
        List<Long> heldDates = new ArrayList<>();
        for (String h : held) {
            Long d = date(h);
            assertTrue(d != null, h + " is dated");
            if (!heldDates.contains(d)) {
                heldDates.add(d);
                heldRuns += count.get(d);
                assertTrue(held.containsAll(dates.get(d)), "every tag of a held date: " + dates.get(d));
            }
        }
        assertEquals(held.size(), heldDates.stream().mapToInt(d -> dates.get(d).size()).sum(), "no tag twice");
        for (int i = 1; i < held.size(); i++) {
            assertTrue(date(held.get(i - 1)) <= date(held.get(i)), "date order: " + held);
        }
        assertTrue(heldRuns <= ClusterEvaluation.NEWER_SHARE * tags.size(), heldRuns + " of " + tags.size());
        // the held dates are the newest ones, and at least one dated release is left before them
        List<Long> newestFirst = new ArrayList<>(dates.descendingKeySet());
        List<Long> heldNewestFirst = new ArrayList<>(heldDates);
        java.util.Collections.reverse(heldNewestFirst);
        assertEquals(newestFirst.subList(0, heldDates.size()), heldNewestFirst);
        assertTrue(heldDates.isEmpty() || heldDates.size() < dates.size());
        // as many as the rule allows: the next-newest date would pass the quarter, or be the last dated one
        if (heldDates.size() < dates.size() - 1) {
            long next = newestFirst.get(heldDates.size());
            assertTrue(heldRuns + count.get(next) > ClusterEvaluation.NEWER_SHARE * tags.size(),
                    "stopped early at " + heldDates + " of " + newestFirst);
        }
    }

    /** The date a tag names as one number (year, month, patch), or null for an undated tag. */
    private static Long date(String tag) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{2})\\.(\\d{1,2})(?:\\.(\\d{1,9}))?")
                .matcher(tag);
        if (!m.matches()) {
            return null;
        }
        long patch = m.group(3) == null ? 0 : Long.parseLong(m.group(3)) + 1;
        return (Long.parseLong(m.group(1)) * 100 + Long.parseLong(m.group(2))) * 10_000_000_000L + patch;
    }
}
