package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.scaledl.transformer.TransformerSpec;

/**
 * The records whose {@code equals} and {@code hashCode} are written out (for a cold JVM's start-up) against the
 * record contract they replace (the slow reference: component-wise equality read by reflection): a copy is equal
 * with the same hash, and changing any one component alone makes them unequal.
 */
class RecordEqualityTest {

    @Test
    void deviceAndItsParts() throws Exception {
        Device d = new Device("NVIDIA H100 80GB HBM3", 80, 3350, 132, 1980, 494_700, 66_900, 50, 450,
                Device.Kind.GPU, 0, Device.MatrixPeaks.of("bf16", 989e3, "fp8", 1979e3), "SXM5", 64,
                new Device.Platform("NVLink4", 8, 8, 400), 16, 700, "Hopper");
        assertEquals(18, checkRecord(d, this::other).size());
        assertEquals(4, checkRecord(d.platform(), this::other).size());
        assertEquals(1, checkRecord(d.matrixPeaks(), this::other).size());
    }

    @Test
    void layerFeatures() throws Exception {
        LayerFeatures f = new LayerFeatures(3, OpFamily.DENSE, 1e9, 2e9, 3e6, 4e6, 5e6, 4096, 7e5, 0, 0, 0, 4096,
                11008, 1);
        assertEquals(15, checkRecord(f, this::other).size());
    }

    @Test
    void transformerBlock() throws Exception {
        // a block's components constrain each other: two bases vary every one between them
        java.util.Set<String> varied = new java.util.HashSet<>();
        varied.addAll(checkRecord(new TransformerSpec.Block(TransformerSpec.Block.Mixer.ATTENTION, 4096, false,
                TransformerSpec.Block.Ffn.DENSE, 14336), this::other));
        varied.addAll(checkRecord(new TransformerSpec.Block(TransformerSpec.Block.Mixer.ATTENTION, 0, false,
                TransformerSpec.Block.Ffn.MOE, 0), this::other));
        assertEquals(java.util.Set.of("mixer", "window", "chunked", "ffn", "ffnSize", "headDim", "kvHeads",
                "keysAsValues"), varied);
    }

    /** A value of the same type unlike {@code v}. */
    private Object other(Object v) {
        if (v instanceof Double x) {
            return x + 1;
        } else if (v instanceof Integer x) {
            return x + 1;
        } else if (v instanceof Long x) {
            return x + 1;
        } else if (v instanceof Boolean x) {
            return !x;
        } else if (v instanceof String x) {
            // a link kind must stay one (NVLink of a generation)
            return x.matches("NVLink\\d+") ? (x.equals("NVLink5") ? "NVLink4" : "NVLink5") : x + "x";
        } else if (v instanceof Enum<?> e) {
            Object[] all = e.getDeclaringClass().getEnumConstants();
            return all[(e.ordinal() + 1) % all.length];
        } else if (v instanceof Device.MatrixPeaks m) {
            TreeMap<String, Double> c = new TreeMap<>(m.byColumn());
            c.put("fp4", 1.0);
            return new Device.MatrixPeaks(c);
        } else if (v instanceof Device.Platform p) {
            return new Device.Platform(p.linkKind(), p.gpusPerNode(), p.nvlinkDomain(), p.networkGbpsPerGpu() + 1);
        } else if (v instanceof java.util.SortedMap<?, ?> m) {
            TreeMap<String, Double> c = new TreeMap<>();
            m.forEach((k, x) -> c.put((String) k, (Double) x));
            c.put("zz", 1.0);
            return c;
        }
        throw new AssertionError("no other value for " + v.getClass());
    }

    /** Checks a record's equality and hash; returns the components it could vary alone (the others are refused). */
    private static <R extends Record> java.util.Set<String> checkRecord(R r, UnaryOperator<Object> other)
            throws Exception {
        RecordComponent[] cs = r.getClass().getRecordComponents();
        Object[] values = new Object[cs.length];
        for (int i = 0; i < cs.length; i++) {
            cs[i].getAccessor().setAccessible(true);
            values[i] = cs[i].getAccessor().invoke(r);
        }
        Constructor<?> ctor = r.getClass().getDeclaredConstructor(
                Arrays.stream(cs).map(RecordComponent::getType).toArray(Class<?>[]::new));
        ctor.setAccessible(true);
        Object copy = ctor.newInstance(values);
        assertEquals(r, copy, "a copy of " + r);
        assertEquals(r.hashCode(), copy.hashCode(), "the hash of a copy of " + r);
        assertNotEquals(r, null);
        assertNotEquals(r, "not a record");
        java.util.Set<String> varied = new java.util.HashSet<>();
        for (int i = 0; i < cs.length; i++) {
            Object[] changed = values.clone();
            changed[i] = other.apply(values[i]);
            Object c;
            try {
                c = ctor.newInstance(changed);
            } catch (java.lang.reflect.InvocationTargetException e) {
                if (e.getCause() instanceof IllegalArgumentException) {
                    continue;
                }
                throw e;
            }
            varied.add(cs[i].getName());
            assertTrue(referenceEquals(c, copy, cs) == c.equals(copy), cs[i].getName());
            assertNotEquals(r, c, r.getClass().getSimpleName() + " with another " + cs[i].getName());
            assertNotEquals(c, r, r.getClass().getSimpleName() + " with another " + cs[i].getName());
        }
        return varied;
    }

    /** The record contract: equal components (doubles compared as {@link Double#compare} does). */
    private static boolean referenceEquals(Object a, Object b, RecordComponent[] cs) throws Exception {
        for (RecordComponent c : cs) {
            if (!java.util.Objects.equals(c.getAccessor().invoke(a), c.getAccessor().invoke(b))) {
                return false;
            }
        }
        return true;
    }
}
