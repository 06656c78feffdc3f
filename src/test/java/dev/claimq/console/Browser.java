package dev.claimq.console;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium driving the console as a person would, with every click and every
 * submitted keystroke counted, so a test can hold a journey to a number of interactions. It runs
 * Debian's chromium and chromedriver from the PATH and never lets Selenium fetch a browser.
 */
final class Browser implements AutoCloseable {
  static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final ChromeDriver driver;
  private final Path profile;
  private final URI base;
  private int interactions;

  Browser(URI base, int width, int height) {
    this.base = base;
    try {
      profile = Files.createTempDirectory("console-browser");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(onPath("chromium").toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        // Without these Chromium reaches for the network (updates, sync, QUIC probes).
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=" + width + "," + height,
        "--user-data-dir=" + profile);
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    // Both paths given: Selenium Manager has nothing to look up, so it never runs or downloads.
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(onPath("chromedriver").toFile())
            .usingAnyFreePort()
            .build();
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().scriptTimeout(WAIT);
    resize(width, height);
  }

  /** Sets the viewport itself (not the window, whose frame differs by platform). */
  void resize(int width, int height) {
    driver.executeCdpCommand(
        "Emulation.setDeviceMetricsOverride",
        Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", width < 600));
  }

  /** An executable found on the PATH, or a failure that says how to install it. */
  static Path onPath(String name) {
    return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .filter(dir -> !dir.isEmpty())
        .map(dir -> Path.of(dir, name))
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    name
                        + " is not on the PATH. The console tests drive a real browser: install"
                        + " Debian's chromium and chromium-driver (apt-get install chromium"
                        + " chromium-driver)."));
  }

  /** A Chrome DevTools command, e.g. the tab's navigation history. */
  Map<String, Object> cdp(String command) {
    return driver.executeCdpCommand(command, Map.of());
  }

  WebDriver driver() {
    return driver;
  }

  /** Opens a path of the service, e.g. "/console/". Not an interaction: the address bar. */
  void open(String path) {
    driver.get(base.resolve(path).toString());
  }

  /** Clicks the element, once it is shown: one interaction. */
  void click(By by) {
    until(
        d -> {
          visible(by).click();
          return Optional.of(true);
        });
    interactions++;
  }

  /** Types into a field and presses Enter: one interaction. */
  void submit(By by, String text) {
    WebElement field = visible(by);
    field.clear();
    field.sendKeys(text, Keys.ENTER);
    interactions++;
  }

  /** Types into a field without submitting; part of the interaction that submits it. */
  void type(By by, String text) {
    WebElement field = visible(by);
    field.clear();
    field.sendKeys(text);
  }

  /** Presses keys on whatever has focus: Enter counts as an interaction, Tab does not. */
  void press(CharSequence... keys) {
    driver.switchTo().activeElement().sendKeys(keys);
    if (Arrays.asList(keys).contains(Keys.ENTER)) {
      interactions++;
    }
  }

  int interactions() {
    return interactions;
  }

  WebElement visible(By by) {
    return until(d -> d.findElements(by).stream().filter(WebElement::isDisplayed).findFirst());
  }

  /** Waits for the element to hold the text, and answers the element. */
  WebElement text(By by, String text) {
    return until(
        d ->
            d.findElements(by).stream()
                .filter(e -> e.isDisplayed() && e.getText().contains(text))
                .findFirst());
  }

  /** Waits until the condition answers something, and answers it. */
  <T> T until(Function<WebDriver, Optional<T>> condition) {
    return new WebDriverWait(driver, WAIT)
        .withMessage(() -> "in the page:\n" + driver.findElement(By.tagName("body")).getText())
        // The overview redraws every few seconds: an element found just before is then gone.
        .ignoring(StaleElementReferenceException.class)
        .until(d -> condition.apply(d).orElse(null));
  }

  WebElement focused() {
    return driver.switchTo().activeElement();
  }

  Object script(String script, Object... args) {
    return driver.executeScript(script, args);
  }

  Object asyncScript(String script, Object... args) {
    return driver.executeAsyncScript(script, args);
  }

  /** The browser's console since the last call, CSP reports included. */
  List<LogEntry> log() {
    return driver.manage().logs().get(LogType.BROWSER).getAll();
  }

  Path screenshot(String name) {
    try {
      Files.createDirectories(SCREENSHOTS);
      Path target = SCREENSHOTS.resolve(name + ".png");
      Files.copy(
          driver.getScreenshotAs(OutputType.FILE).toPath(),
          target,
          StandardCopyOption.REPLACE_EXISTING);
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      try (Stream<Path> files = Files.walk(profile)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      } catch (IOException ignored) {
        // a temp directory left behind is harmless
      }
    }
  }
}
