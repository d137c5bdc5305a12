package org.scaledl.model;

import org.junit.jupiter.api.Test;

class ScratchScanTest {
    @Test
    void scan() throws Exception {
        for (HostileModelFiles h : new HostileModelFiles[] {new HostileHostModelFileProperties(), new HostileDeviceModelFileProperties()}) {
            java.util.List<String> out = h.scan();
            System.err.println("SCAN " + h.file() + ": " + out.size());
            java.util.Map<String, String> byField = new java.util.TreeMap<>();
            for (String o : out) byField.putIfAbsent(o.replaceAll("\\[\\d+\\]", "[]").replaceAll(" = .*", ""), o);
            byField.values().forEach(o -> System.err.println("SCAN   " + o));
        }
    }
}
