package org.scaledl.model.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Base64;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.InvalidInputException;

class BoostedTreesProperties {
    private static final BoostedTrees.Config CONFIG = new BoostedTrees.Config(60, 3, 0.3, 2, 32, 0.0);

    /** A step function of one feature (plus an irrelevant one) is learnt to near zero training error. */
    @Property(tries = 20)
    void learnsStepFunctions(@ForAll @IntRange(min = 1, max = 1000) int seed) {
        Random r = new Random(seed);
        double cut = r.nextDouble();
        double lo = r.nextGaussian();
        double hi = r.nextGaussian();
        int n = 200;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextDouble(), r.nextDouble()};
            y[i] = x[i][0] <= cut ? lo : hi;
        }
        BoostedTrees t = BoostedTrees.fit(x, y, CONFIG);
        double sse = 0;
        double sst = 0;
        double mean = java.util.Arrays.stream(y).average().orElseThrow();
        for (int i = 0; i < n; i++) {
            sse += Math.pow(t.predict(x[i]) - y[i], 2);
            sst += Math.pow(y[i] - mean, 2);
        }
        // Bins are quantiles, so the cut is found up to one bin of rows.
        assertTrue(sse <= 0.1 * sst + 1e-12, "sse " + sse + " of " + sst);
    }

    /** Same data, same model; and row order does not change predictions. */
    @Property(tries = 10)
    void deterministic(@ForAll @IntRange(min = 1, max = 1000) int seed) {
        Random r = new Random(seed);
        int n = 120;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextDouble(), r.nextGaussian(), r.nextInt(3)};
            y[i] = Math.sin(3 * x[i][0]) + 0.5 * x[i][1] * x[i][2];
        }
        BoostedTrees a = BoostedTrees.fit(x, y, CONFIG);
        BoostedTrees b = BoostedTrees.fit(x.clone(), y.clone(), CONFIG);
        for (double[] row : x) {
            assertEquals(a.predict(row), b.predict(row), 0.0);
        }
    }

    /**
     * Adding trees never increases the training error: each leaf moves its rows by a shrunk mean of their residuals,
     * which lowers their squared error (lr ≤ 1, λ ≥ 0). Fits are deterministic, so the larger ensemble extends the
     * smaller one.
     */
    @Property(tries = 15)
    void moreTreesNeverRaiseTrainingError(@ForAll @IntRange(min = 1, max = 1000) int seed,
            @ForAll @IntRange(min = 1, max = 20) int trees) {
        Random r = new Random(seed);
        int n = 80;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextGaussian(), r.nextDouble()};
            y[i] = r.nextGaussian() + x[i][0] * x[i][1];
        }
        double before = sse(BoostedTrees.fit(x, y, new BoostedTrees.Config(trees, 2, 0.5, 3, 16, 1.0)), x, y);
        double after = sse(BoostedTrees.fit(x, y, new BoostedTrees.Config(trees + 1, 2, 0.5, 3, 16, 1.0)), x, y);
        assertTrue(after <= before + 1e-9 * before, after + " > " + before);
    }

    /** Written and read back, an ensemble predicts bit-identically. */
    @Property(tries = 10)
    void writeReadRoundTripIsExact(@ForAll @IntRange(min = 1, max = 1000) int seed) {
        Random r = new Random(seed);
        int n = 100;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextGaussian(), r.nextDouble(), r.nextInt(4)};
            y[i] = Math.exp(x[i][0]) - x[i][2] * x[i][1];
        }
        BoostedTrees t = BoostedTrees.fit(x, y, CONFIG);
        ObjectNode json = new ObjectMapper().createObjectNode();
        t.write(json);
        BoostedTrees back = BoostedTrees.read(json, 3);
        for (int i = 0; i < n; i++) {
            double[] probe = {r.nextGaussian() * 3, r.nextDouble(), r.nextInt(5)};
            assertEquals(t.predict(x[i]), back.predict(x[i]), 0.0);
            assertEquals(t.predict(probe), back.predict(probe), 0.0);
        }
        assertThrows(InvalidInputException.class, () -> BoostedTrees.read(json, 2), "a split on feature 2");
    }

    /**
     * Corrupted node arrays are either rejected with {@link InvalidInputException} or give trees that still
     * terminate (children always come after their parent).
     */
    @Property(tries = 200)
    void corruptedTreesAreRejectedOrStillTerminate(@ForAll @IntRange(min = 0, max = 4) int array,
            @ForAll @IntRange(min = 0, max = 10_000) int position, @ForAll byte flip) {
        Random r = new Random(5);
        int n = 60;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextGaussian(), r.nextDouble()};
            y[i] = x[i][0] * x[i][1];
        }
        ObjectNode json = new ObjectMapper().createObjectNode();
        BoostedTrees.fit(x, y, new BoostedTrees.Config(3, 3, 0.5, 2, 16, 1.0)).write(json);
        String key = new String[] {"feature", "thresholds", "right", "split", "value"}[array];
        byte[] bytes = Base64.getDecoder().decode(json.get(key).asText());
        bytes[position % bytes.length] ^= (byte) (flip == 0 ? 1 : flip);
        json.put(key, Base64.getEncoder().encodeToString(bytes));
        try {
            BoostedTrees back = BoostedTrees.read(json, 2);
            for (double[] row : x) {
                back.predict(row);
            }
        } catch (InvalidInputException expected) {
            assertTrue(expected.getMessage().contains("trees"), expected.getMessage());
        }
    }

    /**
     * A file of the earlier encoding (five full node arrays, written by the code before the preorder encoding, from
     * the data below) reads into an ensemble that predicts bit-identically to the same fit today, and writes back in
     * the preorder encoding at about a third of its size.
     */
    @org.junit.jupiter.api.Test
    void readsTheEarlierFullArrayEncoding() throws Exception {
        Random r = new Random(11);
        int n = 150;
        double[][] x = new double[n][];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = new double[] {r.nextGaussian(), r.nextDouble(), r.nextInt(4)};
            y[i] = Math.exp(x[i][0]) - x[i][2] * x[i][1];
        }
        BoostedTrees fresh = BoostedTrees.fit(x, y, new BoostedTrees.Config(12, 3, 0.3, 2, 32, 0.0));
        com.fasterxml.jackson.databind.JsonNode old;
        try (java.io.InputStream in = getClass().getResourceAsStream("trees-full-arrays.json")) {
            old = new ObjectMapper().readTree(in);
        }
        BoostedTrees legacy = BoostedTrees.read(old, 3);
        for (int i = 0; i < n; i++) {
            double[] probe = {r.nextGaussian() * 3, r.nextDouble(), r.nextInt(5)};
            assertEquals(fresh.predict(x[i]), legacy.predict(x[i]), 0.0);
            assertEquals(fresh.predict(probe), legacy.predict(probe), 0.0);
        }
        ObjectNode now = new ObjectMapper().createObjectNode();
        legacy.write(now);
        assertEquals(BoostedTrees.PREORDER, now.get("encoding").asText());
        assertTrue(now.toString().length() < 0.5 * old.toString().length(), now.toString().length() + " vs "
                + old.toString().length());
        ObjectNode fitted = new ObjectMapper().createObjectNode();
        fresh.write(fitted);
        assertEquals(fitted, now, "the same trees write the same text whichever encoding they were read from");
    }

    /**
     * A tree of an earlier file whose children merely follow their parent (here numbered breadth first) is written in
     * preorder, renumbered, and predicts as it did.
     */
    @org.junit.jupiter.api.Test
    void treesNotInPreorderAreRenumberedOnWrite() {
        // x0 <= 0.5 ? (x1 <= 0.2 ? 1 : 2) : 3, nodes breadth first: 0 split, 1 split, 2 leaf 3, 3 leaf 1, 4 leaf 2
        int[] feature = {0, 1, -1, -1, -1};
        double[] threshold = {0.5, 0.2, 0, 0, 0};
        int[] left = {1, 3, 0, 0, 0};
        int[] right = {2, 4, 0, 0, 0};
        double[] value = {0, 0, 3, 1, 2};
        java.nio.ByteBuffer f = java.nio.ByteBuffer.allocate(20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.nio.ByteBuffer th = java.nio.ByteBuffer.allocate(40).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.nio.ByteBuffer l = java.nio.ByteBuffer.allocate(20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.nio.ByteBuffer r = java.nio.ByteBuffer.allocate(20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.nio.ByteBuffer v = java.nio.ByteBuffer.allocate(40).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 5; i++) {
            f.putInt(feature[i]);
            th.putDouble(threshold[i]);
            l.putInt(left[i]);
            r.putInt(right[i]);
            v.putDouble(value[i]);
        }
        ObjectNode old = new ObjectMapper().createObjectNode();
        old.put("base", 0.0);
        old.putArray("sizes").add(5);
        Base64.Encoder b64 = Base64.getEncoder();
        old.put("feature", b64.encodeToString(f.array()));
        old.put("threshold", b64.encodeToString(th.array()));
        old.put("left", b64.encodeToString(l.array()));
        old.put("right", b64.encodeToString(r.array()));
        old.put("value", b64.encodeToString(v.array()));
        BoostedTrees legacy = BoostedTrees.read(old, 2);
        ObjectNode now = new ObjectMapper().createObjectNode();
        legacy.write(now);
        BoostedTrees back = BoostedTrees.read(now, 2);
        double[][] probes = {{0.4, 0.1}, {0.4, 0.3}, {0.6, 0.1}, {0.5, 0.2}, {0.7, 0.9}};
        double[] expected = {1, 2, 3, 1, 3};
        for (int i = 0; i < probes.length; i++) {
            assertEquals(expected[i], legacy.predict(probes[i]), 0.0);
            assertEquals(expected[i], back.predict(probes[i]), 0.0);
        }
    }

    /** An encoding this version does not know is refused by name. */
    @org.junit.jupiter.api.Test
    void unknownEncodingIsRefusedByName() {
        ObjectNode json = new ObjectMapper().createObjectNode();
        BoostedTrees.fit(new double[][] {{0}, {1}, {2}, {3}}, new double[] {0, 1, 2, 3},
                new BoostedTrees.Config(2, 1, 0.5, 1, 4, 0.0)).write(json);
        json.put("encoding", "columnar");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> BoostedTrees.read(json, 1));
        assertTrue(e.getMessage().contains("columnar") && e.getMessage().contains(BoostedTrees.PREORDER),
                e.getMessage());
    }

    private static double sse(BoostedTrees t, double[][] x, double[] y) {
        double s = 0;
        for (int i = 0; i < y.length; i++) {
            s += Math.pow(t.predict(x[i]) - y[i], 2);
        }
        return s;
    }
}
