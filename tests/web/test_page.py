#!/usr/bin/python3
"""make test-web: the browser bench driven in headless Chromium, as a student uses it.

Opens build-web/seqgrad.html from disk (no server), trains a small Transformer
on recall until its held-out accuracy passes 90%, checks that its first loss is
the command line's for the same seed, runs a lab and reads its verdict, switches
to Korean, stops a run and starts the engine again, runs the compare mode (the
RNN and the LSTM beside the Transformer) in a browser that asks for Korean, and
fails on any error on the console. Keeps a screenshot. Needs Debian's chromium, chromium-driver and
python3-selenium.
"""
import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import Select

# The run the test trains, in the page and on the command line.
RUN = {"model": "transformer", "task": "recall", "len": 16, "steps": 300, "d_model": 64, "seed": 0}


def fail(message):
    print(f"test-web: FAILED: {message}")
    sys.exit(1)


def wait_for(driver, script, timeout, what):
    """Polls a JavaScript expression until it is truthy; returns its value."""
    end = time.time() + timeout
    while time.time() < end:
        value = driver.execute_script("return " + script)
        if value:
            return value
        errors = driver.execute_script("return window.seqgradState ? window.seqgradState.errors : []")
        if errors:
            fail(f"the page shows an error while waiting for {what}: {errors}")
        time.sleep(0.2)
    fail(f"{what} did not happen within {timeout} s")


def set_value(driver, element_id, value):
    element = driver.find_element("id", element_id)
    if element.tag_name == "select":
        Select(element).select_by_value(str(value))
    else:
        element.clear()
        element.send_keys(str(value))


def native_first_loss(binary):
    """Step 1's loss of the same run on the command line (its log.csv)."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "train", "--model", RUN["model"], "--task", RUN["task"], "--len", str(RUN["len"]),
                        "--steps", "1", "--d-model", str(RUN["d_model"]), "--seed", str(RUN["seed"]), "--out", out,
                        "--overwrite"], check=True, capture_output=True)
        with open(pathlib.Path(out) / "log.csv") as f:
            return float(next(csv.DictReader(f))["loss"])


def native_train(binary):
    """The whole run on the command line: its --json summary."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([binary, "train", "--model", RUN["model"], "--task", RUN["task"], "--len",
                               str(RUN["len"]), "--steps", str(RUN["steps"]), "--d-model", str(RUN["d_model"]),
                               "--seed", str(RUN["seed"]), "--out", out, "--overwrite", "--json"],
                              check=True, capture_output=True, text=True)
        return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--page", required=True)
    parser.add_argument("--binary", required=True, help="the native seqgrad, for the same run on the command line")
    parser.add_argument("--screenshot", required=True)
    args = parser.parse_args()
    page = pathlib.Path(args.page).resolve()
    if not page.is_file():
        fail(f"no page at {page}: run make web")

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,2400", "--lang=en-US",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        opened = time.time()
        driver.get(page.as_uri())
        version = wait_for(driver, "window.seqgradState.ready && document.getElementById('status').textContent", 60,
                           "the engine loading")
        print(f"page: {page.stat().st_size / 1e6:.2f} MB, engine ready after {time.time() - opened:.1f} s ({version})")

        # Train: accuracy past 90% on held-out sequences.
        for key in ["model", "task", "len", "steps", "d_model", "seed"]:
            set_value(driver, key, RUN[key])
        started = time.time()
        driver.find_element("id", "train-start").click()
        wait_for(driver, "window.seqgradState.lastProgress", 60, "the first progress message")
        busy_click = driver.execute_script("return document.getElementById('train-start').disabled")
        if not busy_click:
            fail("the Train button stays enabled while a run is going")
        trained = wait_for(driver, "window.seqgradState.trained", 600, "the training run ending")
        took = time.time() - started
        acc = trained["eval"]["token_acc"]
        print(f"train: {RUN['model']} on {RUN['task']} len {RUN['len']}, {trained['steps']} steps in {took:.1f} s "
              f"({trained['ms_per_step']:.1f} ms a step): held-out token accuracy {acc:.4f}")
        if acc < 0.9:
            fail(f"held-out accuracy {acc} is below 90%")
        if "%" not in driver.find_element("id", "eval-table").text:
            fail("the evaluation table shows no accuracy")
        if len(driver.find_elements("css selector", "#attention svg")) != 10:
            fail("the attention section does not show the 8 heads of the 2 layers and each layer's query row")
        note = driver.find_element("id", "attention-note").text
        print(f"attention: {note}")
        named = trained["attention_named"]
        if f"layer {named['layer']}, head {named['head']}: {named['on_key']:.2f} on the key" not in note:
            fail(f"the attention section does not name the head that looks at the key: '{note}'")
        if len(driver.find_elements("css selector", "#grads-charts svg")) != 2:
            fail("the gradient section does not show its two charts")

        # The same seed gives the same first batch and weights as the command line: step 1's loss agrees to
        # float tolerance (WebAssembly has no fused multiply-add, so the last digits differ).
        native = native_first_loss(args.binary)
        relative = abs(trained["first_loss"] - native) / native
        print(f"same run on the command line: step 1 loss {native:.7f}, in the page {trained['first_loss']:.7f} "
              f"(relative difference {relative:.1e})")
        if relative > 1e-4:
            fail("the page's first loss is not the command line's")
        native_run = native_train(args.binary)
        print(f"after {RUN['steps']} steps: loss {native_run['final_train_loss']:.6f} and held-out accuracy "
              f"{native_run['eval_token_acc']:.4f} on the command line ({native_run['ms_per_step']:.1f} ms a step), "
              f"{trained['final_loss']:.6f} and {acc:.4f} in the page ({trained['ms_per_step']:.1f} ms a step)")
        if abs(native_run["eval_token_acc"] - acc) > 0.02:
            fail("the page's held-out accuracy is not the command line's")
        log = driver.execute_script("return window.seqgradState.progressLog")
        first = next((row for row in log if row[2] is not None and row[2] >= 0.9), None)
        if first:
            print(f"the training batch's accuracy first passed 90% at step {first[0]}, {first[3]:.1f} s into the run")

        # A lab: its verdict as computed.
        driver.find_element("css selector", "#lab-attention-by-hand button").click()
        lab = wait_for(driver, "window.seqgradState.labs['attention-by-hand']", 120, "the lab's verdict")
        verdict = driver.find_element("css selector", "#lab-attention-by-hand .verdict").text
        print(f"lab attention-by-hand: {verdict}")
        if not lab["holds"] or verdict != "holds":
            fail(f"attention-by-hand: holds={lab['holds']}, the page says '{verdict}'")

        # Path lengths of every kind.
        driver.find_element("id", "paths-run").click()
        paths = wait_for(driver, "window.seqgradState.paths", 120, "the path lengths")
        rnn = [p["path_from_first"] for p in paths["data"] if p["model"] == "rnn"]
        tf = [p["path_from_first"] for p in paths["data"] if p["model"] == "transformer"]
        print(f"paths from x_0 at T = 8..64: rnn {rnn}, transformer {tf}")
        if not (rnn[-1] > rnn[0] and len(set(tf)) == 1):
            fail("the path lengths do not grow for the RNN and stay flat for the Transformer")

        # Korean: the page's words and the labs' claims.
        Select(driver.find_element("id", "lang")).select_by_value("ko")
        heading = driver.find_element("css selector", "#train h2").text
        verdict = driver.find_element("css selector", "#lab-attention-by-hand .verdict").text
        print(f"in Korean: '{heading}', verdict '{verdict}'")
        if heading != "모델 학습" or verdict != "성립":
            fail("switching to Korean did not change the page's words")
        driver.save_screenshot(args.screenshot)
        Select(driver.find_element("id", "lang")).select_by_value("en")

        # Stop: a long run stopped, the engine started again and usable.
        set_value(driver, "steps", 20000)
        driver.find_element("id", "train-start").click()
        wait_for(driver, "window.seqgradState.lastProgress && window.seqgradState.busy", 60, "the long run starting")
        driver.find_element("id", "train-stop").click()
        wait_for(driver, "window.seqgradState.ready && !window.seqgradState.busy", 60, "the engine starting again")
        print("stop: the run was stopped and the engine started again")

        # A browser that asks for Korean gets the page in Korean (no choice saved yet).
        driver.execute_script("localStorage.clear()")
        driver.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": "ko-KR"})
        driver.execute_cdp_cmd("Network.setUserAgentOverride",
                               {"userAgent": driver.execute_script("return navigator.userAgent"),
                                "acceptLanguage": "ko-KR,ko"})
        driver.refresh()
        wait_for(driver, "window.seqgradState && window.seqgradState.ready", 60, "the engine loading again")
        heading = driver.find_element("css selector", "#train h2").text
        print(f"a browser asking for Korean (navigator.language {driver.execute_script('return navigator.language')})"
              f" is shown: '{heading}'")
        if heading != "모델 학습":
            fail("the page does not follow the browser's language")

        # The compare mode, in Korean: the RNN and the LSTM trained beside the Transformer on recall, the three
        # charts drawn with Korean words, the table and a verdict computed from the accuracies.
        set_value(driver, "compare-len", 64)
        set_value(driver, "compare-steps", 300)
        started = time.time()
        driver.find_element("id", "compare-run").click()
        compared = wait_for(driver, "window.seqgradState.compared", 900, "the comparison ending")
        reported = driver.execute_script("return window.seqgradState.compareProgress")
        rows = {row["model"]: row for row in compared["rows"]}
        print(f"compare (Korean page): {time.time() - started:.1f} s; progress from {reported}; " + ", ".join(
            f"{m} {100 * r['token_acc']:.1f}% (path {r['path_from_first']}, far/near {r['grad_far_near']:.2g})"
            for m, r in rows.items()))
        if sorted(rows) != ["lstm", "rnn", "transformer"] or sorted(reported) != ["lstm", "rnn", "transformer"]:
            fail("the comparison did not train the RNN, the LSTM and the Transformer")
        charts = driver.find_elements("css selector", "#compare-charts svg")
        if len(charts) != 3:
            fail(f"the comparison shows {len(charts)} charts, not 3")
        chart_text = " ".join(c.text for c in charts)
        for word in ["모델별 학습 손실", "거리에 따른 |dL/dx_t|", "스텝"]:
            if word not in chart_text:
                fail(f"the comparison's charts lack the Korean '{word}': {chart_text[:300]}")
        for model in ["rnn", "lstm", "transformer"]:
            if model not in chart_text:
                fail(f"the comparison's charts name no {model}")
        verdict = driver.find_element("id", "compare-verdict").text
        print(f"compare verdict: {verdict}")
        if compared["verdict_kind"] != "attention" or "이 장의 예측대로" not in verdict:
            fail("at length 64 after 300 steps the Transformer should recall far better than the recurrent models")
        if not (rows["transformer"]["path_from_first"] < rows["rnn"]["path_from_first"]):
            fail("the Transformer's path from x_0 is not shorter than the RNN's")
        table = driver.find_element("id", "compare-rows").text
        if "처음 보는 시퀀스의 정확도" not in table:
            fail("the comparison's table is not in Korean")
        driver.save_screenshot(str(pathlib.Path(args.screenshot).with_name("seqgrad-compare.png")))

        # The console: no error, no warning from the page or the engine.
        problems = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        if problems:
            fail("the console shows: " + json.dumps(problems)[:2000])
        print(f"console: no error; screenshot: {args.screenshot}")
    finally:
        driver.quit()
    print("test-web: passed")


if __name__ == "__main__":
    main()
