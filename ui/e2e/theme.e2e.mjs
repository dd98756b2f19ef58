// The dark theme: the app started again under GTK's dark theme.

import { card } from "./fixtures.mjs";
import { s, step, shot, launch, quitApp, startDriver, stopDriver } from "./harness.mjs";

/** The marketplace and Installed in the dark theme. */
export async function darkTheme() {
  await step("dark theme", async () => {
    await quitApp();
    await stopDriver();
    await startDriver({ GTK_THEME: "Adwaita:dark" });
    await launch();
    const dark = await s.execute("return matchMedia('(prefers-color-scheme: dark)').matches");
    await shot("13-dark-marketplace");
    await (await s.find('[data-testid="nav-installed"]')).click();
    await s.waitFor(card("fx2"));
    await shot("14-dark-installed");
    if (!dark) console.log("        (WebKitGTK did not report prefers-color-scheme: dark here; screenshots are light)");
  });
}
