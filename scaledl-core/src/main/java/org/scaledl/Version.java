package org.scaledl;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The library's version, from the build ({@code org/scaledl/scaledl.properties}, filtered by Maven), recorded in
 * every saved model and printed by {@code scaledl --version}.
 */
public final class Version {
    private static final String VERSION = load();

    private Version() {
    }

    /** The version, e.g. {@code 0.2.0-SNAPSHOT}; {@code unknown} when the resource is missing. */
    public static String get() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = Version.class.getResourceAsStream("/org/scaledl/scaledl.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            return "unknown";
        }
    }
}
