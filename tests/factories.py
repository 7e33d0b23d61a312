"""Factories for catalog and account objects."""
import hashlib
from datetime import UTC, datetime, timedelta

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from backend.accounts.models import Provider
from backend.catalog.models import Collection, File, Granule


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests")

    @factory.post_generation
    def role(self, create, extracted, **kwargs):
        if create and extracted:
            self.groups.add(Group.objects.get_or_create(name=extracted)[0])
        if create:
            self.save()


class CollectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Collection

    short_name = factory.Sequence(lambda n: f"TEST{n:03d}")
    version = "061"
    title = factory.LazyAttribute(lambda c: f"Test product {c.short_name}")
    processing_level = "2"
    platform = "Terra"
    instrument = "MODIS"


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider

    name = factory.Sequence(lambda n: f"PROV{n}")


class GranuleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Granule

    collection = factory.SubFactory(CollectionFactory)
    granule_id = factory.Sequence(lambda n: f"G{n:06d}")
    state = Granule.State.ARCHIVED
    temporal_start = factory.Sequence(
        lambda n: datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=n)
    )
    temporal_end = factory.LazyAttribute(lambda g: g.temporal_start + timedelta(minutes=5))
    west, south, east, north = -10.0, -10.0, 10.0, 10.0
    attributes = factory.LazyFunction(lambda: {"day_night": "Day", "cloud_cover": 10})


class FileFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = File

    granule = factory.SubFactory(GranuleFactory)
    name = factory.Sequence(lambda n: f"file{n}.hdf")
    size = 4
    checksum_type = File.ChecksumType.MD5
    checksum = hashlib.md5(b"data").hexdigest()
