"""Offline transcription with PocketSphinx (PyPI `pocketsphinx`, its bundled US English model).

Usage: python3 sphinx_transcribe.py <raw PCM: signed 16-bit little-endian, mono, 16 kHz>
Prints JSON: [{"startSec", "endSec", "text"}] for each stretch of speech the voice activity
detector finds, in time order. Called by src/providers/transcriber/pocketsphinx.ts.
"""
import json
import re
import sys

from pocketsphinx import Decoder, Segmenter

ALTERNATE = re.compile(r"\(\d+\)$")  # "read(2)": the dictionary's second pronunciation


def main(path: str) -> None:
    decoder = Decoder(samprate=16000, loglevel="FATAL")
    segmenter = Segmenter(sample_rate=16000)
    utterances = []
    with open(path, "rb") as pcm:
        for speech in segmenter.segment(pcm):
            decoder.start_utt()
            decoder.process_raw(speech.pcm, full_utt=True)
            decoder.end_utt()
            words = [ALTERNATE.sub("", s.word) for s in decoder.seg() if not s.word.startswith(("<", "[", "+"))]
            text = " ".join(w for w in words if w)
            if text:
                utterances.append({"startSec": round(speech.start_time, 2), "endSec": round(speech.end_time, 2), "text": text})
    json.dump(utterances, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
