// The entry point maps ArgumentParser's outcomes onto samlgate's exit statuses:
// 0 success, 1 some input failed, 2 usage error.
await SamlgateMain.run()
