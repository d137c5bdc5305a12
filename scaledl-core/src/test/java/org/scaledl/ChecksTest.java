package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ChecksTest {
    @Test
    void messagesFillPlaceholdersInOrderLikeGuava() {
        assertEquals("batch must be positive: -3", assertThrows(IllegalArgumentException.class,
                () -> Checks.argument(false, "batch must be positive: %s", -3)).getMessage());
        assertEquals("a 1 b 2 [3, 4]", Checks.format("a %s b %s", 1, 2, 3, 4));
        assertEquals("no args %s", Checks.format("no args %s"));
        assertEquals("state x", assertThrows(IllegalStateException.class, () -> Checks.state(false, "state %s", "x"))
                .getMessage());
        Checks.argument(true, "never formatted %s", new Object() {
            @Override
            public String toString() {
                throw new AssertionError("formatted although the check passed");
            }
        });
    }
}
