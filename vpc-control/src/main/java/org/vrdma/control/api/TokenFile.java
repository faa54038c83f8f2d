package org.vrdma.control.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * The API's bearer token: 32 random bytes from {@link SecureRandom}, written at first start to
 * {@code <data dir>/api-token} with owner-only permissions (0600), read back on later starts. A
 * token file that group or others can read is refused, since the token may have leaked.
 */
public final class TokenFile {
    public static final String FILE_NAME = "api-token";
    private static final Set<PosixFilePermission> OWNER_ONLY =
            Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    private TokenFile() {}

    public static String loadOrCreate(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            byte[] bytes = new byte[32];
            new SecureRandom().nextBytes(bytes);
            String token = HexFormat.of().formatHex(bytes);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                Files.writeString(file, token + "\n", StandardCharsets.UTF_8);
                return token;
            } catch (FileAlreadyExistsException raced) {
                // Another process created it first: use theirs.
            }
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
        if (!OWNER_ONLY.containsAll(perms)) {
            throw new IOException("token file " + file + " is readable by others ("
                    + PosixFilePermissions.toString(perms) + "); delete it to have a new token made, or chmod 600 it");
        }
        return read(file);
    }

    /** Reads a token file as the CLI does. */
    public static String read(Path file) throws IOException {
        String token = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (token.isEmpty()) {
            throw new IOException("token file " + file + " is empty");
        }
        return token;
    }
}
