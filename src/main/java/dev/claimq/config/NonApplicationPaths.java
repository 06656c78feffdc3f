package dev.claimq.config;

import java.net.URI;

/** Where Quarkus serves a non-application endpoint such as /q/metrics or /q/health. */
public final class NonApplicationPaths {
  private NonApplicationPaths() {}

  /**
   * The endpoint's path as Quarkus resolves it against its root (the main server's non-application
   * root, or the management interface's): a relative path under the root, an absolute one as it is.
   */
  public static String resolved(String root, String path) {
    return URI.create("/").resolve(root.endsWith("/") ? root : root + "/").resolve(path).getPath();
  }
}
