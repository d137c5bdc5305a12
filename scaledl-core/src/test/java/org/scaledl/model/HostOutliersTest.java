package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.io.DatasetReader;
import org.scaledl.workload.Sample;

/**
 * The host fit leaves out runs no model explains (a time a factor of 5 or more off the fit of the others, and far
 * outside their spread), names them where they were read, and fits the rest as if they had never been there; clean
 * data lose nothing.
 */
class HostOutliersTest {
    /** Four families of the bundled data (some 150 runs): enough to cross-validate, quick to fit. */
    private static List<Sample> clean() {
        Set<String> families = Set.of("resnet", "mobilenet", "alexnet", "squeezenet");
        return DatasetReader.read(TestData.cpuDdp()).samples().stream()
                .filter(s -> families.contains(s.workload().tag("family").orElseThrow())).toList();
    }

    @Test
    void aRunNoModelExplainsIsLeftOutNamedAndTheOthersFitAsWithoutIt() {
        List<Sample> clean = clean();
        assertFalse(RuntimePredictor.fit(clean).provenance().config().containsKey(LayerCost.LEFT_OUT),
                "clean data lose nothing");
        int k = 17;
        List<Sample> others = new ArrayList<>(clean);
        others.remove(k);
        RuntimePredictor reference = RuntimePredictor.fit(others);
        for (double factor : new double[] {1000, 1e-3}) {
            List<Sample> bad = new ArrayList<>(clean);
            Sample wrong = Sample.of(clean.get(k).workload(), clean.get(k).millis() * factor);
            bad.set(k, wrong);
            RuntimePredictor p = RuntimePredictor.fit(bad);
            String where = wrong.workload().tag(DatasetReader.SOURCE_TAG).orElseThrow();
            assertTrue(where.matches(".*runs\\.csv:\\d+"), where);
            assertEquals(where, p.provenance().config().get(LayerCost.LEFT_OUT));
            assertEquals(bad.size(), p.provenance().trainingSamples(), "the provenance counts what was given");
            for (Sample s : clean) {
                Prediction a = reference.predict(s.workload());
                Prediction b = p.predict(s.workload());
                assertEquals(a.millis(), b.millis(), 0.0, "the others fit exactly as without the wrong run");
                assertEquals(a.lowMillis(), b.lowMillis(), 0.0, "and so does the interval");
                assertEquals(a.warnings(), b.warnings(), "and the domain");
            }
        }
    }

    /**
     * A fit of a few runs (here six of one family), whose spread says little, leaves out a run 10,000 times off (the
     * intervals of every prediction were 2,000 times wide with it) and keeps one 3 times off.
     */
    @Test
    void aFewRunsFitLeavesOutOnlyAFactorOfAHundred() {
        List<Sample> six = clean().stream().filter(s -> s.workload().tag("family").orElseThrow().equals("alexnet"))
                .limit(6).toList();
        assertEquals(6, six.size());
        List<Sample> others = six.subList(0, 5);
        RuntimePredictor reference = RuntimePredictor.fit(others);
        List<Sample> bad = new ArrayList<>(others);
        Sample wrong = Sample.of(six.get(5).workload(), six.get(5).millis() * 1e4);
        bad.add(wrong);
        RuntimePredictor p = RuntimePredictor.fit(bad);
        assertEquals(wrong.workload().tag(DatasetReader.SOURCE_TAG).orElseThrow(),
                p.provenance().config().get(LayerCost.LEFT_OUT));
        Prediction a = reference.predict(six.get(5).workload());
        Prediction b = p.predict(six.get(5).workload());
        assertEquals(a.millis(), b.millis(), 0.0, "the others fit exactly as without it");
        assertEquals(a.highMillis(), b.highMillis(), 0.0, "and so does the interval");
        List<Sample> noisy = new ArrayList<>(others);
        noisy.add(Sample.of(six.get(5).workload(), six.get(5).millis() * 3));
        assertFalse(RuntimePredictor.fit(noisy).provenance().config().containsKey(LayerCost.LEFT_OUT),
                "a factor of 3 among six runs is no slip to leave out");
        // nine runs of two families, the limit of the rule, the same
        List<Sample> nine = new ArrayList<>(clean().stream().filter(s -> s.workload().tag("family").orElseThrow()
                .equals("resnet")).limit(4).toList());
        nine.addAll(others);
        nine.set(2, Sample.of(nine.get(2).workload(), nine.get(2).millis() * 1e4));
        assertEquals(9, nine.size());
        assertEquals(nine.get(2).workload().tag(DatasetReader.SOURCE_TAG).orElseThrow(),
                RuntimePredictor.fit(nine).provenance().config().get(LayerCost.LEFT_OUT));
    }

    /**
     * A time too small to fit (a subnormal) is left out and named as its graph's runs say it is off (it was refused
     * as an argument error, which a dataset's reader gives before a fit sees it).
     */
    @Test
    void aTimeTooSmallToFitIsLeftOutNotACrash() {
        List<Sample> bad = new ArrayList<>(clean());
        bad.set(3, Sample.of(bad.get(3).workload(), 4.9e-324));
        assertEquals(bad.get(3).workload().tag(DatasetReader.SOURCE_TAG).orElseThrow(),
                RuntimePredictor.fit(bad).provenance().config().get(LayerCost.LEFT_OUT));
    }
}
