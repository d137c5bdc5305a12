package org.scaledl;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 digests as hex text, for what the library compares or checksums (model files, device figures, graphs'
 * structures): one place that knows the algorithm is on every Java platform.
 *
 * <pre>{@code
 * String h = Digests.sha256("text");   // 64 hex digits
 * }</pre>
 */
public final class Digests {
    private Digests() {
    }

    /** The hex SHA-256 of a text's UTF-8 bytes. */
    public static String sha256(String text) {
        return sha256(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The hex SHA-256 of bytes. */
    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
